/* The calls of Gomes et al.'s profiling library ("Memory allocation anomalies in
 * high-performance computing applications"), linked against libheapscope_stub.so, or built
 * with -DHEAPSCOPE_WEAK and no library:
 * runs alone (no-ops); under the recorder its definitions win
 * (tests/e2e/test_region_api.py). 16016 x2 before init (top level), x3 inside
 * "size_profiling", dump, then x4 after a reset: the exit snapshot has only 4. */
#include <stdio.h>
#include <stdlib.h>

#include "heapscope.h"

static void *volatile sink;

static void churn(size_t size, int n)
{
    for (int i = 0; i < n; i++) {
        sink = malloc(size);
        free(sink);
    }
}

int main(int argc, char **argv)
{
    int reset = argc > 1;
    churn(16016, 2);
    init_size_profiling();
    churn(16016, 3);
    end_size_profiling();
    dump_size_profiling();
    if (reset) {
        reset_size_profiling();
        init_size_profiling();
        churn(16016, 4);
        end_size_profiling();
    }
    printf("active=%d\n", heapscope_active());
    return 0;
}
