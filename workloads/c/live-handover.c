/*
 * hs-wl-live-handover — threads that keep churning live arrays they hand to each other:
 * the main thread fills one array of objects (16-256 bytes) per thread; each round every
 * thread replaces random slots of its array (free the old object, allocate a new one),
 * then the arrays move one thread along the ring. After the first round nearly every
 * free is of another live thread's block (or of the main thread's), mixed in random
 * order with the thread's own: blocks of three owners circulate.
 */
#include <pthread.h>

#include "wl_common.h"

typedef struct { unsigned char **objs; uint32_t *sizes; } array_t;

static int nthreads;
static long long rounds, ops;
static size_t nslots;
static array_t *arrays;  /* arrays[(t + r) % n]: what thread t churns in round r */
static uint64_t *hashes; /* per thread: what it checked, in order */
static pthread_barrier_t barrier;

static void fill(array_t *a, size_t i, wl_rng *rng, unsigned char tag)
{
    a->sizes[i] = (uint32_t)wl_rng_range(rng, 16, 256);
    a->objs[i] = wl_check(malloc(a->sizes[i]), "live-handover");
    a->objs[i][0] = tag;
    a->objs[i][a->sizes[i] - 1] = tag;
}

static void *worker(void *arg)
{
    const int t = (int)(intptr_t)arg;
    wl_rng rng;
    wl_rng_seed(&rng, 1000 + (uint64_t)t);
    uint64_t h = WL_FNV_INIT;
    for (long long r = 0; r < rounds; r++) {
        array_t *a = &arrays[(t + r) % nthreads];
        for (long long k = 0; k < ops; k++) {
            size_t i = (size_t)wl_rng_range(&rng, 0, nslots - 1);
            unsigned char *o = a->objs[i];
            if (o[0] != o[a->sizes[i] - 1]) {
                fprintf(stderr, "hs-wl-live-handover: block contents corrupted\n");
                exit(1);
            }
            h = wl_hash_u64(h, a->sizes[i]);
            free(o);
            fill(a, i, &rng, (unsigned char)(t + r));
        }
        pthread_barrier_wait(&barrier); /* then the arrays move along the ring */
    }
    hashes[t] = h;
    return NULL;
}

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"threads", "threads handing their arrays along a ring", 2, 2, 256},
        {"rounds", "rounds", 200, 0, 1000000000},
        {"slots", "objects per array", 20000, 1, 10000000},
        {"ops", "replacements per thread and round", 20000, 0, 1000000000},
    };
    wl_parse(argc, argv, "Threads churn live object arrays and hand them along a ring each round.",
             opts, 4);
    nthreads = (int)opts[0].value;
    rounds = opts[1].value;
    nslots = (size_t)opts[2].value;
    ops = opts[3].value;

    wl_rng rng;
    wl_rng_seed(&rng, 1);
    arrays = wl_check(calloc((size_t)nthreads, sizeof *arrays), "arrays");
    for (int t = 0; t < nthreads; t++) {
        arrays[t].objs = wl_check(calloc(nslots, sizeof *arrays[t].objs), "array");
        arrays[t].sizes = wl_check(calloc(nslots, sizeof *arrays[t].sizes), "array");
        for (size_t i = 0; i < nslots; i++) fill(&arrays[t], i, &rng, 0xff);
    }
    hashes = wl_check(calloc((size_t)nthreads, sizeof *hashes), "hashes");
    pthread_t *tids = wl_check(calloc((size_t)nthreads, sizeof *tids), "threads");
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    for (int t = 0; t < nthreads; t++)
        if (pthread_create(&tids[t], NULL, worker, (void *)(intptr_t)t) != 0) {
            fprintf(stderr, "hs-wl-live-handover: cannot create thread %d\n", t);
            return 1;
        }
    uint64_t h = WL_FNV_INIT;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(tids[t], NULL);
        h = wl_hash_u64(h, hashes[t]);
    }
    pthread_barrier_destroy(&barrier);
    for (int t = 0; t < nthreads; t++) {
        for (size_t i = 0; i < nslots; i++) free(arrays[t].objs[i]);
        free(arrays[t].objs);
        free(arrays[t].sizes);
    }
    free(tids);
    free(hashes);
    free(arrays);
    printf("live-handover: %d threads, %lld rounds of %lld replacements in %zu slots\n", nthreads,
           rounds, ops, nslots);
    wl_print_checksum(h);
    return 0;
}
