/* A short run that ends while the timeline's sampler thread is busy (1 ms samples,
 * 2 ms snapshots: tests/e2e/test_timeline_record.py): argv[1] malloc/free pairs of
 * 50 sizes, then a 20 ms nap, then the exit. */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    for (long i = 0; i < n; i++)
        free(malloc(100 + (size_t)(i % 50)));
    struct timespec ts = {0, 20 * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
    return 0;
}
