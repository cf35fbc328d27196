/* Allocation calls that fail, and known ones that succeed (tests/format/test_failed_allocs.py):
 *   malloc(SIZE_MAX) x2                     NULL, ENOMEM
 *   calloc(SIZE_MAX / 2, 4)                  NULL: the product overflows
 *   posix_memalign(&p, 24, 64)               EINVAL: 24 is not a power of two
 *   realloc(p, SIZE_MAX - 4096)              NULL, p left as it was
 *   memalign(64, SIZE_MAX - 64)              NULL
 *   aligned_alloc(64, SIZE_MAX - 127)        NULL
 *   operator new(SIZE_MAX / 2, nothrow)      NULL (C++ build only)
 * and malloc(40) x3, calloc(10, 8) x1, posix_memalign(64, 256) x1 that succeed. Prints
 * "failed N" (the calls that failed here, for the test to compare) and exits 0.
 * With argv[1] "oom": instead, malloc(512) under an address-space limit until 3 calls
 * fail (small sizes take the recorder's fast path, counted before the call), then the
 * limit lifted (before that calloc(1, 600) and realloc(block, 600) once each, failing as
 * well; C++: then new char[512] twice, each throwing bad_alloc); prints
 * "ok N failed 3 new_failed M calloc_failed 1 realloc_failed 1". */
#include <malloc.h>
#include <string.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __cplusplus
#include <new>
#endif

static void *volatile sink;
static void *kept[1 << 20];

static int oom(void)
{
    struct rlimit old, low;
    getrlimit(RLIMIT_AS, &old);
    kept[0] = malloc(512);
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld", &pages) != 1)
        return 1;
    fclose(f);
    low = old;
    low.rlim_cur = (rlim_t)pages * 4096 + (16u << 20);
    setrlimit(RLIMIT_AS, &low);
    long ok = 1, failed = 0;
    while (failed < 3 && ok < (1 << 20)) {
        void *p = malloc(512);
        if (p)
            kept[ok++] = p;
        else
            failed++;
    }
    /* calloc and realloc's fast paths too: 600 bytes, a size no other call here asks */
    long calloc_failed = (sink = calloc(1, 600)) == NULL;
    long realloc_failed = (sink = realloc(kept[1], 600)) == NULL; /* kept[1] stays */
    long new_failed = 0;
#ifdef __cplusplus
    for (int i = 0; i < 2; i++) { /* the recorder's operator new fast path, failing */
        try {
            char *c = new char[512];
            delete[] c;
        } catch (const std::bad_alloc &) {
            new_failed++;
        }
    }
#endif
    setrlimit(RLIMIT_AS, &old);
    for (long i = 0; i < ok; i++)
        free(kept[i]);
    printf("ok %ld failed %ld new_failed %ld calloc_failed %ld realloc_failed %ld\n", ok, failed,
           new_failed, calloc_failed, realloc_failed);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "oom") == 0)
        return oom();
    int failed = 0;
    void *p;
    for (int i = 0; i < 2; i++)
        failed += (sink = malloc(SIZE_MAX)) == NULL;
    failed += (sink = calloc(SIZE_MAX / 2, 4)) == NULL;
    failed += posix_memalign(&p, 24, 64) != 0;
    void *keep = malloc(40);
    failed += (sink = realloc(keep, SIZE_MAX - 4096)) == NULL;
    failed += (sink = memalign(64, SIZE_MAX - 64)) == NULL;
    failed += (sink = aligned_alloc(64, SIZE_MAX - 127)) == NULL;
#ifdef __cplusplus
    failed += (sink = ::operator new(SIZE_MAX / 2, std::nothrow)) == NULL;
#endif
    for (int i = 0; i < 2; i++)
        free(malloc(40));
    free(keep);
    free(calloc(10, 8));
    if (posix_memalign(&p, 64, 256) == 0)
        free(p);
    printf("failed %d\n", failed);
    return 0;
}
