/* The heap in use, block by block (tests/e2e/test_timeline_heap_exact.py): each region
 * changes the heap by a figure the program prints itself, as the sum of
 * malloc_usable_size over the blocks it allocated minus those it freed inside it:
 *   "<region> <bytes>"
 * Regions (process-wide, so each has a begin and an end sample):
 *   small     malloc of 1..1000 bytes (glibc's cache and its bins), half freed again
 *   big       a 100 KiB and a 1 MiB block (the latter mapped), freed; a 200 KiB kept
 *   cxx       operator new / new[] / sized delete, 16..400 bytes
 *   mixed     calloc, realloc (grow, shrink, move), posix_memalign, aligned_alloc
 *   thread    a second thread (started before) allocates 2000 blocks and frees 1000 of
 *             them; its figure is printed after the region, as "worker <bytes>"
 *   gone      every block still held is freed: the figure falls by all of them
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vector>

#include "heapscope.h"

static long long delta;

static void *got(void *p)
{
    delta += (long long)malloc_usable_size(p);
    return p;
}

static void gone(void *p)
{
    delta -= (long long)malloc_usable_size(p);
    free(p);
}

static void report(const char *region)
{
    printf("%s %lld\n", region, delta);
    delta = 0;
}

static int go[2], done[2]; /* pipes: the worker allocates between them (no allocation) */

static void *worker(void *arg)
{
    (void)arg;
    char byte;
    if (read(go[0], &byte, 1) != 1)
        return NULL;
    void *blocks[2000];
    long long mine = 0;
    for (int i = 0; i < 2000; i++) {
        blocks[i] = malloc(8 + (size_t)(i * 13) % 500);
        mine += (long long)malloc_usable_size(blocks[i]);
    }
    for (int i = 0; i < 2000; i += 2) {
        mine -= (long long)malloc_usable_size(blocks[i]);
        free(blocks[i]);
    }
    static long long result;
    result = mine;
    if (write(done[1], "x", 1) != 1)
        return NULL;
    return &result;
}

int main()
{
    printf("heap_usable\n"); /* stdout's buffer: allocated before the regions */
    pthread_t t;
    if (pipe(go) != 0 || pipe(done) != 0 || pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    std::vector<void *> keep; /* freed in "gone" */
    std::vector<char *> keep_cxx;
    keep.reserve(10000);
    keep_cxx.reserve(10000);

    HEAPSCOPE_REGION_BEGIN("small");
    for (size_t n = 1; n <= 1000; n++) {
        void *p = got(malloc(n));
        if (n % 2)
            gone(p);
        else
            keep.push_back(p);
    }
    report("small");
    HEAPSCOPE_REGION_END();

    HEAPSCOPE_REGION_BEGIN("big");
    gone(got(malloc(100 * 1024)));
    gone(got(malloc(1 << 20)));
    keep.push_back(got(malloc(200 * 1024)));
    report("big");
    HEAPSCOPE_REGION_END();

    HEAPSCOPE_REGION_BEGIN("cxx");
    for (size_t n = 16; n <= 400; n += 8) {
        char *one = new char[n];
        delta += (long long)malloc_usable_size(one);
        long *obj = new long(7);
        delta += (long long)malloc_usable_size(obj);
        delta -= (long long)malloc_usable_size(obj);
        delete obj; /* sized delete (C++14) */
        if (n % 16) {
            delta -= (long long)malloc_usable_size(one);
            delete[] one;
        } else {
            keep_cxx.push_back(one);
        }
    }
    report("cxx");
    HEAPSCOPE_REGION_END();

    HEAPSCOPE_REGION_BEGIN("mixed");
    void *c = got(calloc(10, 30));
    delta -= (long long)malloc_usable_size(c);
    c = realloc(c, 5000); /* grows, may move */
    delta += (long long)malloc_usable_size(c);
    delta -= (long long)malloc_usable_size(c);
    c = realloc(c, 40); /* shrinks */
    delta += (long long)malloc_usable_size(c);
    keep.push_back(c);
    void *a = NULL;
    if (posix_memalign(&a, 64, 1000) != 0)
        return 1;
    keep.push_back(got(a));
    keep.push_back(got(aligned_alloc(256, 512)));
    report("mixed");
    HEAPSCOPE_REGION_END();

    HEAPSCOPE_REGION_BEGIN("thread"); /* the thread, made before: its own blocks only */
    char byte;
    if (write(go[1], "x", 1) != 1 || read(done[0], &byte, 1) != 1)
        return 1;
    report("thread");
    HEAPSCOPE_REGION_END();
    void *mine = NULL;
    if (pthread_join(t, &mine) != 0 || !mine)
        return 1;
    delta += *(long long *)mine; /* reported by the test from the worker's line */
    printf("worker %lld\n", delta);
    delta = 0;

    HEAPSCOPE_REGION_BEGIN("gone");
    for (void *p : keep)
        gone(p);
    for (char *p : keep_cxx) {
        delta -= (long long)malloc_usable_size(p);
        delete[] p;
    }
    report("gone");
    HEAPSCOPE_REGION_END();
    return 0;
}
