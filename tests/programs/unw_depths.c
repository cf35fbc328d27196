/* The unwind cache's hard cases (tests/e2e/test_unwind_cache.py): one allocation site
 * reached through two callers at the same stack depth (the same slot for the call
 * site's return address, other return addresses above it), at different depths
 * (recursion), and below a frame of variable size (alloca moves the stack under the
 * same call site); and one call site reached through three callers at the same
 * depth, each with eight sizes (more stacks than a cache set holds, more sizes a
 * site than a few ways would keep). Every path allocates a known number of times. */
#include <alloca.h>
#include <stdlib.h>
#include <string.h>

void *volatile sink;

__attribute__((noinline)) void leaf(void)
{
    sink = malloc(48);
    free(sink);
}

__attribute__((noinline)) void via_a(void) { leaf(); }
__attribute__((noinline)) void via_b(void) { leaf(); }

__attribute__((noinline)) void leaf_sized(size_t n)
{
    sink = malloc(n);
    free(sink);
}

__attribute__((noinline)) void caller_1(size_t n) { leaf_sized(n); }
__attribute__((noinline)) void caller_2(size_t n) { leaf_sized(n); }
__attribute__((noinline)) void caller_3(size_t n) { leaf_sized(n); }

__attribute__((noinline)) void down(int depth)
{
    if (depth == 0)
        leaf();
    else
        down(depth - 1);
    sink = sink; /* not a tail call */
}

__attribute__((noinline)) void sized(size_t n)
{
    char *buf = alloca(n);
    memset(buf, 1, n);
    leaf();
    sink = buf[n - 1] ? sink : NULL;
}

int main(void)
{
    for (int round = 0; round < 20; round++) {
        via_a();
        via_b();
        via_a();
        for (int d = 0; d < 4; d++)
            down(d);
        sized(64 + 32 * (size_t)(round % 3));
        for (size_t k = 0; k < 8; k++) {
            caller_1(100 + 16 * k);
            caller_2(100 + 16 * k);
            caller_1(100 + 16 * k);
            caller_3(100 + 16 * k);
        }
    }
    return 0;
}
