/* Stack trace types (tests/e2e/test_record_stacks.py). Size 1234 is allocated from
 * two call paths — alloc_here() called from path_a() (10 times) and from path_b()
 * (20 times) — inside region "local"; 7 more from path_a() inside region "other";
 * size 1235 from path_a() 3 times (not selected when only 1234 is asked for).
 * The lines of the malloc call and of the calls are marked LINE_* for the test. */
#include <stdlib.h>

#include "heapscope.h"

void *volatile sink;

__attribute__((noinline)) void alloc_here(size_t size)
{
    sink = malloc(size);  /* LINE_MALLOC */
    free(sink);
}

__attribute__((noinline)) void path_a(size_t size, int n)
{
    for (int i = 0; i < n; i++)
        alloc_here(size);  /* LINE_A */
}

__attribute__((noinline)) void path_b(size_t size, int n)
{
    for (int i = 0; i < n; i++)
        alloc_here(size);  /* LINE_B */
}

int main(void)
{
    HEAPSCOPE_REGION_BEGIN("local");
    path_a(1234, 10);
    path_b(1234, 20);
    path_a(1235, 3);
    HEAPSCOPE_REGION_END();
    HEAPSCOPE_REGION_BEGIN("other");
    path_a(1234, 7);
    HEAPSCOPE_REGION_END();
    return 0;
}
