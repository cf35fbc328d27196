/* Allocations of N = argv[1] distinct sizes, 1000..1000+N-1 bytes, one each (freed at
 * once): a profile of about 24*N bytes of SIZE_COUNTS (tests/format/test_disk_full.py
 * records it into a file system too small for it). With argv[2] "dump": a snapshot
 * (heapscope_dump) after the first 10 sizes, a small one that fits; "dumps": one every
 * 100 sizes, and 200 us of sleep after each size (the timeline and trace writer threads
 * append their chunks between the snapshots). argv[3]: the exit status (default 0). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heapscope.h"

static void *volatile sink;

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000;
    int dump = argc > 2 && strcmp(argv[2], "dump") == 0;
    int dumps = argc > 2 && strcmp(argv[2], "dumps") == 0;
    for (long i = 0; i < n; i++) {
        sink = malloc(1000 + (size_t)i);
        free(sink);
        if ((dump && i == 9) || (dumps && i % 100 == 99))
            heapscope_dump();
        if (dumps) {
            struct timespec pause = {0, 200000};
            nanosleep(&pause, NULL);
        }
    }
    return argc > 3 ? atoi(argv[3]) : 0;
}
