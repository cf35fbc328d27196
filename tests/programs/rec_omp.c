/* OpenMP workers allocate while the main thread is inside "omp": every block
 * counts for "omp" (tests/e2e/test_record_counts.py). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "heapscope.h"

int main(void)
{
    long total = 0;
#pragma omp parallel
    total += 0;  /* start the thread pool outside the region */

    HEAPSCOPE_REGION_BEGIN("omp");
#pragma omp parallel for reduction(+ : total) schedule(static)
    for (int i = 0; i < 64; i++) {
        char *p = malloc(8008);
        p[0] = (char)i;
        total += p[0];
        free(p);
    }
    HEAPSCOPE_REGION_END();
    printf("%ld threads=%d\n", total, omp_get_max_threads());
    return 0;
}
