/*
 * hs-wl-prodcon — producer/consumer: one thread allocates batches of 16..512-byte
 * blocks and queues them, another thread checks and frees them. Every free is a
 * remote free (the block was allocated by the other thread).
 */
#include <pthread.h>

#include "wl_common.h"

#define QUEUE_CAP 64

typedef struct { unsigned char **blocks; uint32_t *sizes; } batch_t;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
    batch_t ring[QUEUE_CAP];
    size_t head, count;
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {{0, 0}}, 0, 0};

static long long nbatches;
static size_t batch_len;
static uint64_t seed;

static void push(batch_t b)
{
    pthread_mutex_lock(&q.lock);
    while (q.count == QUEUE_CAP)
        pthread_cond_wait(&q.not_full, &q.lock);
    q.ring[(q.head + q.count) % QUEUE_CAP] = b;
    q.count++;
    pthread_cond_signal(&q.not_empty);
    pthread_mutex_unlock(&q.lock);
}

static batch_t pop(void)
{
    pthread_mutex_lock(&q.lock);
    while (q.count == 0)
        pthread_cond_wait(&q.not_empty, &q.lock);
    batch_t b = q.ring[q.head];
    q.head = (q.head + 1) % QUEUE_CAP;
    q.count--;
    pthread_cond_signal(&q.not_full);
    pthread_mutex_unlock(&q.lock);
    return b;
}

static void *producer(void *arg)
{
    (void)arg;
    wl_rng rng;
    wl_rng_seed(&rng, seed);
    for (long long n = 0; n < nbatches; n++) {
        batch_t b;
        b.blocks = wl_check(malloc(batch_len * sizeof *b.blocks), "batch");
        b.sizes = wl_check(malloc(batch_len * sizeof *b.sizes), "batch");
        for (size_t i = 0; i < batch_len; i++) {
            b.sizes[i] = (uint32_t)wl_rng_range(&rng, 16, 512);
            b.blocks[i] = wl_check(malloc(b.sizes[i]), "prodcon");
            memset(b.blocks[i], (int)(i & 0xff), 16);
        }
        push(b);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"batches", "batches produced", 20000, 0, 1000000000},
        {"batch", "blocks per batch", 100, 1, 10000000},
        {"seed", "random seed", 1, 0, 1000000000},
    };
    wl_parse(argc, argv, "One thread allocates batches, another frees them.", opts, 3);
    nbatches = opts[0].value;
    batch_len = (size_t)opts[1].value;
    seed = (uint64_t)opts[2].value;

    pthread_t tid;
    if (pthread_create(&tid, NULL, producer, NULL) != 0) {
        fprintf(stderr, "hs-wl-prodcon: cannot create the producer thread\n");
        return 1;
    }
    uint64_t h = WL_FNV_INIT;
    for (long long n = 0; n < nbatches; n++) {
        batch_t b = pop();
        for (size_t i = 0; i < batch_len; i++) {
            if (b.blocks[i][15] != (unsigned char)(i & 0xff)) {
                fprintf(stderr, "hs-wl-prodcon: block contents corrupted\n");
                return 1;
            }
            h = wl_hash_u64(h, b.sizes[i]);
            free(b.blocks[i]);
        }
        free(b.blocks);
        free(b.sizes);
    }
    pthread_join(tid, NULL);
    printf("prodcon: %lld batches of %zu\n", nbatches, batch_len);
    wl_print_checksum(h);
    return 0;
}
