// Small C++ allocations under tracking (tests/e2e/test_track_fast_path.py): sizes below
// 1024, which the hooks' fast path takes (larger ones go the general way). In region
// "small": 200 new/delete of 88 bytes, 7 new[]/delete[] of 120, 5 nothrow new/delete
// of 152, and 3 blocks of 168 left live at exit.
#include <new>

#include "heapscope.h"

struct B88 { char bytes[88]; };
struct B152 { char bytes[152]; };
struct B168 { char bytes[168]; };

int main()
{
    heapscope::Region region("small");
    for (int i = 0; i < 200; i++) {
        B88 *volatile p = new B88;
        delete p;
    }
    for (int i = 0; i < 7; i++) {
        char *volatile p = new char[120];
        delete[] p;
    }
    for (int i = 0; i < 5; i++) {
        B152 *volatile p = new (std::nothrow) B152;
        delete p;
    }
    static B168 *volatile kept[3];
    for (int i = 0; i < 3; i++)
        kept[i] = new B168;
    return 0;
}
