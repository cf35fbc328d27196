/* Known lifetimes for tests/e2e/test_lifetimes_and_temporaries.py (record --track).
 * One thread and no stdio, so nothing else allocates between these calls.
 *
 *   size 48   make_temps(): 1000 blocks, each freed before the next allocation:
 *             1000 temporaries, 0 allocations in between each.
 *   size 56   hold_window(), in region "window": 100 blocks allocated in a row, then
 *             freed in allocation order: block i has 99 - i allocations after it
 *             (values 0..99), so 1 temporary (the last one).
 *   size 64   slow_block(): 1 block held across a 20 ms sleep: lifetime >= 20 ms,
 *             0 allocations in between (a temporary: no time bound by default).
 *   size 100  keep_forever(): 4 blocks never freed: 4 live at the snapshot.
 * Lines of the malloc calls are marked LINE-MARK for the test. */
#include <stdlib.h>
#include <time.h>

#define HEAPSCOPE_WEAK  /* runs without the recorder too */
#include "heapscope.h"

#define WINDOW 100

void *volatile sink;
static void *window[WINDOW];
static void *kept[4];

__attribute__((noinline)) void make_temps(int n)
{
    for (int i = 0; i < n; i++) {
        sink = malloc(48);  /* LINE-MARK temps */
        free(sink);
    }
}

__attribute__((noinline)) void hold_window(void)
{
    for (int i = 0; i < WINDOW; i++)
        window[i] = malloc(56);  /* LINE-MARK window */
    for (int i = 0; i < WINDOW; i++)
        free(window[i]);
}

__attribute__((noinline)) void slow_block(void)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    sink = malloc(64);  /* LINE-MARK slow */
    while (nanosleep(&ts, &ts) != 0) {
    }
    free(sink);
}

__attribute__((noinline)) void keep_forever(void)
{
    for (int i = 0; i < 4; i++)
        kept[i] = malloc(100);  /* LINE-MARK kept */
}

int main(void)
{
    make_temps(1000);
    HEAPSCOPE_REGION_BEGIN("window");
    hold_window();
    HEAPSCOPE_REGION_END();
    slow_block();
    keep_forever();
    return 0;
}
