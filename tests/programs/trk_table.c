/* Tracking's side table under known loads (tests/e2e/test_track_table.py). No stdio
 * before the last block is freed: every allocation below is one the test counts.
 *
 *   churn N     N blocks live together, 13 sizes 16..400 B in turn (regular strides:
 *               the hash must spread them), freed in a shuffled order (a deterministic
 *               LCG), then N/2 of them allocated again and half of those freed; the
 *               rest (N/4 blocks, the last ones of every size) leaked at exit
 *   between M   one 1000-byte block, then M pairs of malloc(24)/free, then its free:
 *               M allocations in between, across M / 2^20 epochs of allocation numbers
 *   threads T N T threads allocate N blocks each (size 32 + 16 t) live together, then
 *               each frees the blocks of the next thread (remote frees, all at once)
 *   tiny N      N blocks of 8 bytes live, freed in reverse (under jemalloc: 8-byte
 *               aligned addresses, which only the wide table holds)
 * Prints nothing but "done" at the end (after its last free). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void *volatile sink;

static void *block(size_t n)
{
    void *p = malloc(n);
    if (!p)
        exit(3);
    memset(p, 1, n < 16 ? n : 16);
    return p;
}

static void **pointers(size_t n)
{
    void **v = mmap(NULL, n * sizeof *v, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (v == MAP_FAILED)
        exit(3);
    return v;
}

static const size_t SIZES[13] = {16, 24, 32, 40, 48, 64, 80, 96, 128, 160, 200, 256, 400};

static void churn(size_t n)
{
    void **v = pointers(n);
    for (size_t i = 0; i < n; i++)
        v[i] = block(SIZES[i % 13]);
    size_t *order = (size_t *)pointers(n); /* a shuffle of 0..n-1 */
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t x = 88172645463325252ull;
    for (size_t i = n - 1; i > 0; i--) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t j = (size_t)((x >> 33) % (i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        free(v[order[i]]);
    for (size_t i = 0; i < n / 2; i++)
        v[i] = block(SIZES[i % 13]);
    for (size_t i = 0; i < n / 4; i++)
        free(v[i]); /* v[n/4 .. n/2) leak */
}

static void between(size_t m)
{
    void *a = block(1000);
    for (size_t i = 0; i < m; i++) {
        sink = malloc(24);
        free(sink);
    }
    free(a);
}

struct worker {
    size_t n, size;
    void **mine;
    pthread_barrier_t *ready;
    struct worker *next;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    for (size_t i = 0; i < w->n; i++)
        w->mine[i] = block(w->size);
    pthread_barrier_wait(w->ready); /* all blocks of all threads live */
    for (size_t i = 0; i < w->n; i++)
        free(w->next->mine[i]);
    return NULL;
}

static void threads(int t, size_t n)
{
    struct worker w[64];
    pthread_t id[64];
    pthread_barrier_t ready;
    pthread_barrier_init(&ready, NULL, (unsigned)t);
    for (int k = 0; k < t; k++)
        w[k] = (struct worker){n, 32 + 16 * (size_t)k, pointers(n), &ready, &w[(k + 1) % t]};
    for (int k = 0; k < t; k++)
        if (pthread_create(&id[k], NULL, work, &w[k]))
            exit(3);
    for (int k = 0; k < t; k++)
        pthread_join(id[k], NULL);
}

static void tiny(size_t n)
{
    void **v = pointers(n);
    for (size_t i = 0; i < n; i++)
        v[i] = block(8);
    for (size_t i = n; i-- > 0;)
        free(v[i]);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    size_t n = strtoull(argv[2], NULL, 10);
    if (!strcmp(argv[1], "churn"))
        churn(n);
    else if (!strcmp(argv[1], "between"))
        between(n);
    else if (!strcmp(argv[1], "threads") && argc > 3)
        threads((int)n, strtoull(argv[3], NULL, 10));
    else if (!strcmp(argv[1], "tiny"))
        tiny(n);
    else
        return 2;
    puts("done");
    return 0;
}
