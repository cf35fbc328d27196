/* Timeline test program (tests/e2e/test_timeline_record.py).
 *
 * Process-wide regions, in this order (argv[1] = ms slept in each):
 *   setup                 allocates and frees 64 KiB
 *   hold                  allocates 10 x 1 MiB, touches every page, keeps them
 *   outer > inner         nested; inner sleeps
 *   release               frees the 10 blocks
 * So 5 regions, 10 boundary samples: begin setup, end setup, begin hold, end hold,
 * begin outer, begin inner, end inner, end outer, begin release, end release.
 * A thread-local region ("mine") is not a timeline boundary.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heapscope.h"

#define MIB (1024 * 1024)

static void nap(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : 100;
    char *blocks[10];

    HEAPSCOPE_REGION_BEGIN("setup");
    free(malloc(64 * 1024));
    nap(ms);
    HEAPSCOPE_REGION_END();

    HEAPSCOPE_REGION_BEGIN("hold");
    for (int i = 0; i < 10; i++) {
        blocks[i] = malloc(MIB);
        memset(blocks[i], i + 1, MIB);
    }
    nap(ms);
    HEAPSCOPE_REGION_END();

    HEAPSCOPE_REGION_BEGIN("outer");
    HEAPSCOPE_REGION_BEGIN("inner");
    if (heapscope_thread_region_begin) {
        heapscope_thread_region_begin("mine");
        heapscope_thread_region_end();
    }
    nap(ms);
    HEAPSCOPE_REGION_END();
    HEAPSCOPE_REGION_END();

    HEAPSCOPE_REGION_BEGIN("release");
    for (int i = 0; i < 10; i++)
        free(blocks[i]);
    nap(ms);
    HEAPSCOPE_REGION_END();
    return 0;
}
