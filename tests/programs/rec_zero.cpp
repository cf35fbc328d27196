// Allocations of zero bytes, each a real allocation of size 0 that the recorder counts
// (tests/e2e/test_record_counts.py), all in region "zero", nothing else allocating there:
//   malloc(0) x3, calloc(0, 8) x2, calloc(8, 0) x1, realloc(NULL, 0) x1,
//   new char[0] x2 (operator new[](0)): 9 of size 0;
//   new Empty x4: size 1 (an empty class still has sizeof 1): 4 of size 1.
#include <cstdlib>

#include "heapscope.h"

struct Empty {};

int main()
{
    void *volatile none = nullptr;   // (gcc turns a literal realloc(NULL, n) into malloc)
    void *volatile block;
    HEAPSCOPE_REGION_BEGIN("zero");
    for (int i = 0; i < 3; i++) {
        block = std::malloc(0);
        std::free(block);
    }
    for (int i = 0; i < 2; i++) {
        block = std::calloc(0, 8);
        std::free(block);
    }
    block = std::calloc(8, 0);
    std::free(block);
    block = std::realloc(none, 0);
    std::free(block);
    for (int i = 0; i < 2; i++)
        delete[] new char[0];
    for (int i = 0; i < 4; i++)
        delete new Empty;
    HEAPSCOPE_REGION_END();
    return 0;
}
