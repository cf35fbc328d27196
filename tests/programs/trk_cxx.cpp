// C++ operators under tracking (tests/e2e/test_track_cxx.py): every new/delete pair
// seen once, sizes distinct so each row is one variant.
#include <new>

struct alignas(64) Aligned { char bytes[192]; };

__attribute__((noinline)) static int *keep_forever()
{
    return new int[25];   // 100 B, never deleted
}

int main()
{
    for (int i = 0; i < 7; i++)
        delete new long long;                         // 8 B: new / delete
    for (int i = 0; i < 3; i++)
        delete[] new char[33];                        // 33 B: new[] / delete[]
    char *nt = new (std::nothrow) char[41];           // 41 B: nothrow new[]
    delete[] nt;
    Aligned *a = new Aligned;                         // 192 B, aligned new
    delete a;                                         // aligned (sized) delete
    Aligned *b = new Aligned[2];                      // 384 B: aligned new[]
    delete[] b;
    int *kept = keep_forever();
    return kept[0] == 12345;
}
