/*
 * hs-wl-thread-churn — short-lived threads that exit with live objects: in every
 * round each of T workers frees (after checking) the objects its predecessor of
 * the previous round left behind, allocates new ones and exits. Allocators must
 * recycle the memory of heaps whose thread is gone.
 */
#include <pthread.h>

#include "wl_common.h"

typedef struct {
    int t;
    long long round;
    size_t nobjs;
    unsigned char **objs;   /* left by the previous worker of this lane */
    uint32_t *sizes;
    uint64_t hash;
} lane_t;

static void *worker(void *arg)
{
    lane_t *lane = arg;
    for (size_t i = 0; i < lane->nobjs; i++)
        if (lane->objs[i]) {
            if (lane->objs[i][0] != (unsigned char)(lane->round - 1)) {
                fprintf(stderr, "hs-wl-thread-churn: block contents corrupted\n");
                exit(1);
            }
            lane->hash = wl_hash_u64(lane->hash, lane->sizes[i]);
            free(lane->objs[i]);
        }
    wl_rng rng;
    wl_rng_seed(&rng, (uint64_t)lane->round * 977 + (uint64_t)lane->t);
    for (size_t i = 0; i < lane->nobjs; i++) {
        lane->sizes[i] = (uint32_t)wl_rng_range(&rng, 16, 1024);
        lane->objs[i] = wl_check(malloc(lane->sizes[i]), "thread-churn");
        lane->objs[i][0] = (unsigned char)lane->round;
    }
    return NULL;   /* exits with nobjs live objects */
}

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"threads", "workers per round", 2, 1, 256},
        {"rounds", "rounds (each starts fresh threads)", 2000, 0, 1000000000},
        {"objects", "objects each worker leaves behind", 500, 1, 10000000},
    };
    wl_parse(argc, argv, "Threads exit with live objects that later threads free.", opts, 3);
    const int nthreads = (int)opts[0].value;
    const long long rounds = opts[1].value;
    const size_t nobjs = (size_t)opts[2].value;

    lane_t *lanes = wl_check(calloc((size_t)nthreads, sizeof *lanes), "lanes");
    pthread_t *tids = wl_check(calloc((size_t)nthreads, sizeof *tids), "threads");
    for (int t = 0; t < nthreads; t++) {
        lanes[t].t = t;
        lanes[t].nobjs = nobjs;
        lanes[t].objs = wl_check(calloc(nobjs, sizeof *lanes[t].objs), "lane");
        lanes[t].sizes = wl_check(calloc(nobjs, sizeof *lanes[t].sizes), "lane");
        lanes[t].hash = WL_FNV_INIT;
    }
    for (long long r = 0; r < rounds; r++) {
        for (int t = 0; t < nthreads; t++) {
            lanes[t].round = r;
            if (pthread_create(&tids[t], NULL, worker, &lanes[t]) != 0) {
                fprintf(stderr, "hs-wl-thread-churn: cannot create a thread\n");
                return 1;
            }
        }
        for (int t = 0; t < nthreads; t++)
            pthread_join(tids[t], NULL);
    }
    uint64_t h = WL_FNV_INIT;
    for (int t = 0; t < nthreads; t++) {
        for (size_t i = 0; i < nobjs; i++)
            free(lanes[t].objs[i]);
        h = wl_hash_u64(h, lanes[t].hash);
        free(lanes[t].objs);
        free(lanes[t].sizes);
    }
    free(lanes);
    free(tids);
    printf("thread-churn: %lld rounds of %d threads, %zu objects each\n", rounds, nthreads, nobjs);
    wl_print_checksum(h);
    return 0;
}
