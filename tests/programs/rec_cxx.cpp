// Known C++ allocations (tests/e2e/test_record_counts.py): every operator new/delete
// variant, plus containers. Each operator new counts once, although libstdc++'s
// operator new calls malloc inside.
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "heapscope.h"

struct Plain { char bytes[1111]; };
struct alignas(64) Aligned { char bytes[1152]; };

int main(int argc, char **argv)
{
    bool throwing = argc > 1 && argv[1][0] == 't';
    heapscope::Region region("cxx");
    for (int i = 0; i < 3; i++)
        delete new Plain;                               // new(1111) x3
    delete[] new Plain[2];                              // new[](2222)
    delete new (std::nothrow) Plain;                    // nothrow new(1111)
    delete new Aligned;                                 // new(1152, align 64)
    delete[] new Aligned[2];                            // new[](2304, align 64)
    delete new (std::nothrow) Aligned;                  // nothrow aligned new(1152)
    {
        std::vector<double> v(139);                     // 1112 bytes
        std::string s(1200, 'x');                       // 1201 bytes
        std::printf("%zu %zu\n", v.size(), s.size());
    }
    volatile size_t huge = (size_t)1 << 62;
    delete[] new (std::nothrow) char[huge];             // fails: NULL, counted as failed (apart)
    if (throwing) {  // mimalloc's operator new aborts instead of throwing: not there
        try {
            char *p = new char[huge];                   // fails: bad_alloc
            delete[] p;
        } catch (const std::bad_alloc &) {
            std::printf("bad_alloc\n");
        }
    }
    delete new Plain;                                   // still counted after the throw
    return 0;
}
