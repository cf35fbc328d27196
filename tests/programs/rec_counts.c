/* Known allocations for the recorder's exactness tests (tests/e2e/test_record_counts.py).
 * Sizes are odd enough that nothing else in the process asks for them.
 * Built with -DHEAPSCOPE_WEAK: it also runs without the recorder. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "heapscope.h"

/* Each call's block is its own (the workers churn at once: a shared variable would let
 * one thread free another's block); volatile keeps the pair from being optimized away. */
static void churn(size_t size, int n)
{
    for (int i = 0; i < n; i++) {
        void *volatile block = malloc(size);
        free(block);
    }
}

static pthread_barrier_t started;

static void *worker(void *arg)
{
    long id = (long)arg;
    pthread_barrier_wait(&started);
    churn(5005, 100);  /* counts for "parallel": the main thread's region */
    if (id == 0) {
        if (heapscope_thread_region_begin)
            heapscope_thread_region_begin("mine");  /* this thread only: "parallel/mine" */
        churn(6006, 3);
        if (heapscope_thread_region_end)
            heapscope_thread_region_end();
    }
    pthread_barrier_wait(&started);
    return NULL;
}

int main(int argc, char **argv)
{
    int do_reset = argc > 1 && argv[1][0] == 'r';
    /* Thread creation allocates (TLS): done outside the regions checked exactly. */
    pthread_t threads[4];
    pthread_barrier_init(&started, NULL, 5);
    for (long i = 0; i < 4; i++)
        pthread_create(&threads[i], NULL, worker, (void *)i);

    HEAPSCOPE_REGION_BEGIN("phase1");
    churn(1001, 10);
    for (int i = 0; i < 3; i++)
        free(calloc(7, 143));            /* 1001 bytes */
    HEAPSCOPE_REGION_BEGIN("inner");
    churn(2002, 5);                      /* phase1/inner */
    HEAPSCOPE_REGION_END();
    HEAPSCOPE_REGION_END();

    HEAPSCOPE_REGION_BEGIN("phase2");
    HEAPSCOPE_REGION_BEGIN("inner");
    churn(2002, 7);                      /* phase2/inner: another region */
    HEAPSCOPE_REGION_END();
    HEAPSCOPE_REGION_END();

    /* One call of each API, nothing else, in "apis". */
    HEAPSCOPE_REGION_BEGIN("apis");
    void *p = malloc(3001);
    if (malloc_usable_size(p) < 3001)    /* the allocator underneath answers */
        return 1;
    void *q = calloc(3, 1001);           /* 3003 */
    q = realloc(q, 3103);
    void *volatile none = NULL;          /* (gcc turns a literal realloc(NULL, n) into malloc) */
    void *r = realloc(none, 3203);
    r = realloc(r, 0);                   /* a free, not an allocation */
    int realloc0_block = r != NULL;      /* glibc: NULL; mimalloc: a new minimal block */
    void *s = reallocarray(NULL, 11, 371);  /* 4081 */
    void *a = NULL;
    posix_memalign(&a, 64, 4004);
    void *b = aligned_alloc(64, 4032);
    void *c = memalign(128, 4005);
    void *d = valloc(4006);
    void *e = pvalloc(4007);
    volatile size_t huge = SIZE_MAX / 2;
    void *f = malloc(huge);              /* fails: counted as failed, in no size row */
    free(NULL);                          /* not counted */
    free(p); free(q); free(r); free(s); free(a); free(b); free(c); free(d); free(e); free(f);
    HEAPSCOPE_REGION_END();

    HEAPSCOPE_REGION_BEGIN("parallel");
    pthread_barrier_wait(&started);      /* workers allocate now ... */
    pthread_barrier_wait(&started);      /* ... and are done */
    HEAPSCOPE_REGION_END();
    for (int i = 0; i < 4; i++)
        pthread_join(threads[i], NULL);

    HEAPSCOPE_REGION_BEGIN("reset");
    churn(7007, 5);
    if (do_reset && heapscope_reset)
        heapscope_reset();               /* forgets everything counted so far ... */
    churn(7007, 2);                      /* ... so only these 2 remain (else 7) */
    HEAPSCOPE_REGION_END();
    HEAPSCOPE_REGION_END();              /* unbalanced: ignored */

    churn(8008, 4);                      /* top level: "(none)" */
    printf("done realloc0=%d\n", realloc0_block);
    return 0;
}
