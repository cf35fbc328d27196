/*
 * hs-wl-false-sharing — cache-scratch style: the main thread allocates one small
 * object per worker (neighbours in memory under most allocators) and hands them
 * out; each worker frees its object, then repeatedly allocates an object of the
 * same size, writes it many times and frees it. An allocator that gives the freed
 * neighbour slot back to the worker makes threads write the same cache line.
 */
#include <pthread.h>

#include "wl_common.h"

static long long rounds, writes;
static size_t objsize;
static uint64_t *results;

typedef struct { int t; unsigned char *first; } task_t;

static void *worker(void *arg)
{
    task_t *task = arg;
    free(task->first);                      /* a block the main thread allocated */
    uint64_t acc = 0;
    for (long long r = 0; r < rounds; r++) {
        volatile unsigned char *p = wl_check(malloc(objsize), "false-sharing");
        for (size_t i = 0; i < objsize; i++)
            p[i] = (unsigned char)(task->t + r);
        for (long long w = 0; w < writes; w++)
            p[w % objsize] = (unsigned char)(p[w % objsize] + 1);
        for (size_t i = 0; i < objsize; i++)
            acc += p[i];
        free((void *)p);
    }
    results[task->t] = acc;
    return NULL;
}

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"threads", "worker threads", 2, 1, 256},
        {"rounds", "allocate/write/free rounds per thread", 2000, 0, 1000000000},
        {"writes", "writes to the object per round", 20000, 0, 1000000000},
        {"size", "object size in bytes", 8, 1, 4096},
    };
    wl_parse(argc, argv, "Small objects written by different threads (cache-scratch).", opts, 4);
    const int nthreads = (int)opts[0].value;
    rounds = opts[1].value;
    writes = opts[2].value;
    objsize = (size_t)opts[3].value;

    results = wl_check(calloc((size_t)nthreads, sizeof *results), "results");
    task_t *tasks = wl_check(calloc((size_t)nthreads, sizeof *tasks), "tasks");
    pthread_t *tids = wl_check(calloc((size_t)nthreads, sizeof *tids), "threads");
    for (int t = 0; t < nthreads; t++) {
        tasks[t].t = t;
        tasks[t].first = wl_check(malloc(objsize), "false-sharing");
    }
    for (int t = 0; t < nthreads; t++)
        if (pthread_create(&tids[t], NULL, worker, &tasks[t]) != 0) {
            fprintf(stderr, "hs-wl-false-sharing: cannot create thread %d\n", t);
            return 1;
        }
    uint64_t h = WL_FNV_INIT;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(tids[t], NULL);
        h = wl_hash_u64(h, results[t]);
    }
    free(tids);
    free(tasks);
    free(results);
    printf("false-sharing: %d threads, %lld rounds of %lld writes to %zu B\n",
           nthreads, rounds, writes, objsize);
    wl_print_checksum(h);
    return 0;
}
