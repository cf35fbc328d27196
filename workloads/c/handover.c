/*
 * hs-wl-handover — threads swap ownership of object arrays every round: thread t
 * allocates an array of objects, then (after a barrier) checks and frees the array
 * thread t+1 allocated. Every free is remote, while the allocating thread is alive.
 */
#include <pthread.h>

#include "wl_common.h"

typedef struct { unsigned char **objs; uint32_t *sizes; } array_t;

static int nthreads;
static long long rounds;
static size_t nobjs;
static uint64_t seed;
static array_t *shelf;          /* shelf[t]: the array thread t made this round */
static uint64_t *hashes;        /* per thread: what it checked, in order */
static pthread_barrier_t barrier;

static void *worker(void *arg)
{
    const int t = (int)(intptr_t)arg;
    wl_rng rng;
    wl_rng_seed(&rng, seed * 1000 + (uint64_t)t);
    uint64_t h = WL_FNV_INIT;
    for (long long r = 0; r < rounds; r++) {
        array_t a;
        a.objs = wl_check(malloc(nobjs * sizeof *a.objs), "array");
        a.sizes = wl_check(malloc(nobjs * sizeof *a.sizes), "array");
        for (size_t i = 0; i < nobjs; i++) {
            a.sizes[i] = (uint32_t)wl_rng_range(&rng, 32, 256);
            a.objs[i] = wl_check(malloc(a.sizes[i]), "handover");
            a.objs[i][0] = (unsigned char)t;
            a.objs[i][a.sizes[i] - 1] = (unsigned char)r;
        }
        shelf[t] = a;
        pthread_barrier_wait(&barrier);
        const int from = (t + 1) % nthreads;
        array_t b = shelf[from];
        for (size_t i = 0; i < nobjs; i++) {
            if (b.objs[i][0] != (unsigned char)from || b.objs[i][b.sizes[i] - 1] != (unsigned char)r) {
                fprintf(stderr, "hs-wl-handover: block contents corrupted\n");
                exit(1);
            }
            h = wl_hash_u64(h, b.sizes[i]);
            free(b.objs[i]);
        }
        free(b.objs);
        free(b.sizes);
        pthread_barrier_wait(&barrier);   /* shelf[t] is rewritten next round */
    }
    hashes[t] = h;
    return NULL;
}

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"threads", "threads passing arrays around a ring", 2, 2, 256},
        {"rounds", "rounds", 2000, 0, 1000000000},
        {"objects", "objects per array", 1000, 1, 10000000},
        {"seed", "random seed", 1, 0, 1000000000},
    };
    wl_parse(argc, argv, "Threads swap ownership of object arrays every round (remote frees).", opts, 4);
    nthreads = (int)opts[0].value;
    rounds = opts[1].value;
    nobjs = (size_t)opts[2].value;
    seed = (uint64_t)opts[3].value;

    shelf = wl_check(calloc((size_t)nthreads, sizeof *shelf), "shelf");
    hashes = wl_check(calloc((size_t)nthreads, sizeof *hashes), "hashes");
    pthread_t *tids = wl_check(calloc((size_t)nthreads, sizeof *tids), "threads");
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    for (int t = 0; t < nthreads; t++)
        if (pthread_create(&tids[t], NULL, worker, (void *)(intptr_t)t) != 0) {
            fprintf(stderr, "hs-wl-handover: cannot create thread %d\n", t);
            return 1;
        }
    uint64_t h = WL_FNV_INIT;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(tids[t], NULL);
        h = wl_hash_u64(h, hashes[t]);
    }
    pthread_barrier_destroy(&barrier);
    free(tids);
    free(hashes);
    free(shelf);
    printf("handover: %d threads, %lld rounds of %zu objects\n", nthreads, rounds, nobjs);
    wl_print_checksum(h);
    return 0;
}
