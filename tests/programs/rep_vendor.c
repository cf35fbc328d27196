/* A "third-party" library for tests/e2e/test_peak_and_leaks.py: its cache is never
 * freed (5 blocks of 200 bytes), the kind of leak a suppression file names. */
#include <stdlib.h>

static void *cache[5];

__attribute__((noinline)) void vendor_cache_init(void)
{
    for (int i = 0; i < 5; i++)
        cache[i] = malloc(200);  /* LINE-MARK vendor */
}
