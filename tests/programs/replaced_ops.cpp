// A program that replaces only operator new(size_t) and operator delete(void*), as
// FreeFem++ does to count its pointers (tests/allocator/test_replaced_ops.py,
// tests/e2e/test_record_replaced_ops.py). The other variants it calls (sized delete,
// new[]/delete[], nothrow) have standard defaults that call these two, so every new
// and delete below must reach them: "new 50 delete 50 live 0", under glibc and under
// each preloaded library. Mode "pool": the blocks come from a static arena, not from
// malloc, and nothing but the program's delete may see them.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "heapscope.h"

static long news, deletes, foreign;
static bool pool;
alignas(16) static char arena[1 << 16];
static std::size_t used;

void *operator new(std::size_t n)
{
    ++news;
    if (pool) {
        void *p = arena + used;
        used += (n + 15) & ~std::size_t(15);
        if (used > sizeof arena) throw std::bad_alloc();
        return p;
    }
    void *p = std::malloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    return p;
}

void operator delete(void *p) noexcept
{
    if (!p) return;
    ++deletes;
    bool in_arena = (char *)p >= arena && (char *)p < arena + sizeof arena;
    if (in_arena != pool) ++foreign; // a block this program did not hand out
    if (!pool) std::free(p);
}

struct S { char bytes[77]; };
struct D { char bytes[53]; ~D() { std::memset(bytes, 0, 1); } }; // a cookie: sized delete[]

int main(int argc, char **argv)
{
    pool = argc > 1 && std::strcmp(argv[1], "pool") == 0;
    {
        heapscope::Region region("ops");
        for (int i = 0; i < 10; i++) delete new S;                   // new(77), sized delete
        for (int i = 0; i < 10; i++) delete[] new S[3];              // new[](231), delete[]
        for (int i = 0; i < 10; i++) delete[] new D[3];              // new[](167), sized delete[]
        for (int i = 0; i < 10; i++) {                               // nothrow new(77),
            S *s = new (std::nothrow) S;                             // nothrow delete
            ::operator delete(s, std::nothrow);
        }
        for (int i = 0; i < 10; i++) delete[] new (std::nothrow) S[2]; // nothrow new[](154)
    }
    std::printf("new %ld delete %ld live %ld foreign %ld\n", news, deletes, news - deletes,
                foreign);
    return news != 50 || deletes != 50 || foreign != 0;
}
