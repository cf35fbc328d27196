// End-to-end stacks test program: allocations of 40 bytes along five known call
// paths in region "local" (200, 150, 100, 75 and 50 times), plus 7 along a sixth path
// outside any region, and 41-byte blocks whose stacks are never asked for.
// tests/e2e/test_stacks.py finds the source lines by their LINE-MARK comments.
#define HEAPSCOPE_WEAK
#include <heapscope.h>

#include <cstdlib>
#include <vector>

static std::vector<void *> kept;

static void keep(void *p) {
    if (p)
        kept.push_back(p);  // the vector's own growth allocates other sizes
}

extern "C" __attribute__((noinline)) void *alloc_leaf(size_t n) {
    return malloc(n);  // LINE-MARK leaf-malloc
}

extern "C" __attribute__((noinline)) void path_a(int times) {
    for (int i = 0; i < times; i++)
        keep(alloc_leaf(40));  // LINE-MARK a-call
}

extern "C" __attribute__((noinline)) void path_b(int times) {
    for (int i = 0; i < times; i++)
        keep(malloc(40));  // LINE-MARK b-malloc
}

namespace fem {
template <typename T>
struct Mesh {
    __attribute__((noinline)) static void refine(int times) {
        for (int i = 0; i < times; i++)
            keep(new char[40]);  // LINE-MARK c-new
    }
};
}  // namespace fem

static inline __attribute__((always_inline)) void *inlined_alloc(void) {
    return malloc(40);  // LINE-MARK d-inlined
}

extern "C" __attribute__((noinline)) void path_d(int times) {
    for (int i = 0; i < times; i++)
        keep(inlined_alloc());  // LINE-MARK d-call
}

extern "C" __attribute__((noinline)) void phase_local(void) {
    path_a(200);  // LINE-MARK local-a1
    path_b(150);  // LINE-MARK local-b
    path_a(100);  // LINE-MARK local-a2
    fem::Mesh<double>::refine(75);  // LINE-MARK local-c
    path_d(50);  // LINE-MARK local-d
    for (int i = 0; i < 9; i++)
        keep(malloc(41));
}

int main() {
    kept.reserve(4096);
    path_b(7);  // LINE-MARK main-b
    HEAPSCOPE_REGION_BEGIN("local");
    phase_local();  // LINE-MARK main-local
    HEAPSCOPE_REGION_END();
    for (void *p : kept)
        free(p);  // mixing new[] and free is fine for char under glibc; counts are what matter
    return 0;
}
