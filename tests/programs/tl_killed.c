/* Timeline of a process killed by SIGKILL (tests/e2e/test_timeline_record.py): enters
 * region "work", holds 4 x 1 MiB (touched), prints "ready" and sleeps until killed.
 * No snapshot is ever written: the timeline is all that is left. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapscope.h"

int main(void)
{
    HEAPSCOPE_REGION_BEGIN("work");
    for (int i = 0; i < 4; i++)
        memset(malloc(1 << 20), 1, 1 << 20);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
