/* acc_truths: blocks whose use is known, for record --access (tests/e2e/test_access.py).
 *
 * Each scenario allocates from its own function (its own call path), in THREADS threads
 * at once; the blocks are freed by another thread than the one that allocated them
 * (a queue between pairs of threads), except where said:
 *   partial   N 1 MiB buffers, only their first 64 KiB written; one line per buffer:
 *             "partial <offset of the block in its page>"
 *   full      N 1 MiB buffers, every byte written
 *   unused    N blocks of 200 bytes never touched
 *   used      N blocks of 216 bytes, every byte written
 *   readfirst N blocks of 3000 bytes: one byte read, then written (every 4th after 4 x WAIT ms);
 *             and N of 3008
 *             bytes only read (never written)
 *   zeroed    N calloc blocks of 3016 bytes only read (calloc: no uninitialised read)
 *   pipe      N blocks of 8192 bytes filled by read(2) from a pipe, then summed
 *   live      N blocks of 1 MiB, the first 256 KiB written, alive at the end (not freed)
 * It prints a checksum of what it read back, so output can be compared with and without
 * the recorder. Usage: acc_truths N WAIT_MS scenario...
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define MIB (1024 * 1024)

static int n_blocks, wait_ms;
static const char *scenario;
static _Atomic uint64_t checksum;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

/* Blocks handed from thread i to thread i ^ 1, which frees them. */
static void *handed[THREADS][4096];
static _Atomic int handed_n[THREADS];
static pthread_barrier_t barrier;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void hand(int self, void *p) { handed[self][handed_n[self]++] = p; }

__attribute__((noinline)) static void *partial_alloc(void) { return malloc(MIB); }
__attribute__((noinline)) static void *full_alloc(void) { return malloc(MIB); }
__attribute__((noinline)) static void *unused_alloc(void) { return malloc(200); }
__attribute__((noinline)) static void *used_alloc(void) { return malloc(216); }
__attribute__((noinline)) static void *readfirst_alloc(void) { return malloc(3000); }
__attribute__((noinline)) static void *readonly_alloc(void) { return malloc(3008); }
__attribute__((noinline)) static void *zeroed_alloc(void) { return calloc(1, 3016); }
__attribute__((noinline)) static void *pipe_alloc(void) { return malloc(8192); }
__attribute__((noinline)) static void *live_alloc(void) { return malloc(MIB); }

static void run(int self)
{
    volatile char sink = 0;
    for (int i = 0; i < n_blocks; i++) {
        char *p = NULL;
        if (!strcmp(scenario, "partial")) {
            p = partial_alloc();
            memset(p, 1, 64 * 1024);
            pthread_mutex_lock(&print_lock);
            printf("partial %lu\n", (unsigned long)((uintptr_t)p % 4096));
            pthread_mutex_unlock(&print_lock);
        } else if (!strcmp(scenario, "full")) {
            p = full_alloc();
            memset(p, 2, MIB);
        } else if (!strcmp(scenario, "unused")) {
            p = unused_alloc();
        } else if (!strcmp(scenario, "used")) {
            p = used_alloc();
            memset(p, 3, 216);
        } else if (!strcmp(scenario, "readfirst")) {
            p = readfirst_alloc();
            sink += p[100];
            char *q = readonly_alloc();
            sink += q[7];
            hand(self, q);
            if (i % 4 == 0)
                sleep_ms(4 * wait_ms); /* the read seen before the write by the watcher, which
                                        * a loaded machine may run late */
            memset(p, 4, 3000);
        } else if (!strcmp(scenario, "zeroed")) {
            p = zeroed_alloc();
            sink += p[1000];
            checksum += (unsigned char)p[1000];
        } else if (!strcmp(scenario, "pipe")) {
            int fds[2];
            if (pipe(fds) != 0)
                abort();
            p = pipe_alloc();
            char src[8192];
            for (int k = 0; k < 8192; k++)
                src[k] = (char)(k * 7 + i);
            if (write(fds[1], src, 8192) != 8192)
                abort();
            size_t got = 0;
            while (got < 8192) {
                ssize_t r = read(fds[0], p + got, 8192 - got);
                if (r <= 0)
                    abort();
                got += (size_t)r;
            }
            close(fds[0]);
            close(fds[1]);
            uint64_t sum = 0;
            for (int k = 0; k < 8192; k++)
                sum += (unsigned char)p[k];
            checksum += sum;
        } else if (!strcmp(scenario, "live")) {
            p = live_alloc();
            memset(p, 5, 256 * 1024);
            continue; /* not freed */
        }
        hand(self, p);
    }
    pthread_barrier_wait(&barrier);
    int other = self ^ 1; /* free the partner's blocks */
    for (int i = 0; i < handed_n[other]; i++)
        free(handed[other][i]);
}

static void *thread_main(void *arg)
{
    run((int)(intptr_t)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: acc_truths N WAIT_MS scenario...\n");
        return 2;
    }
    n_blocks = atoi(argv[1]);
    wait_ms = atoi(argv[2]);
    if (n_blocks < 1 || n_blocks > 2000)
        return 2;
    for (int a = 3; a < argc; a++) {
        scenario = argv[a];
        pthread_barrier_init(&barrier, NULL, THREADS);
        for (int t = 0; t < THREADS; t++)
            handed_n[t] = 0;
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; t++)
            pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t);
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
        pthread_barrier_destroy(&barrier);
    }
    printf("checksum %llu\n", (unsigned long long)checksum);
    return 0;
}
