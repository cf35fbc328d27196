/* Blocks with known lifetimes, for tracking mode (tests/e2e/test_track_lifetimes.py).
 * Phases, one after the other (no stdio: nothing else on the heap):
 *   48 B   x100  freed at once                     -> 100 temporaries (N = 0)
 *   64 B   x10   freed after exactly 50 allocations of 8 B (between bin 6)
 *   72 B   x5 each freed after 1, 2, 3 allocations of 24 B (temporaries: N=2 -> 10)
 *   1000 B x5 live together, freed; then 4000 B x2 live together, freed: the peak,
 *          8000 B, held by the 4000-B blocks
 *   realloc 10 -> 130 -> 1300, freed; calloc(7, 3) freed; 20 B x4 (24 usable)
 *   56 B   x4 allocated here, freed by another thread
 *   200 B  x3 never freed, in leak_three()
 * Argument "slow": one 40-B block freed after 300 ms, four 40-B blocks at once.
 * Argument "many": 30 blocks of 24 B live together (HEAPSCOPE_TRACK_MAX_BLOCKS).
 * Argument "fork": the child allocates 4 blocks of 88 B, never freed; the parent
 *          frees its own 4 blocks of 96 B.
 * Argument "wait": 1000 x 40 B freed at once, one 77-B block kept, then "ready" on
 *          stdout and wait for a signal. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *blocks[600];

static void *free_them(void *arg)
{
    void **p = arg;
    for (int i = 0; i < 4; i++)
        free(p[i]);
    return NULL;
}

__attribute__((noinline)) static void leak_three(void)
{
    for (int i = 0; i < 3; i++)
        blocks[i] = malloc(200);
}

static void known_lifetimes(void)
{
    for (int i = 0; i < 100; i++)
        free(malloc(48));

    int n = 0;
    for (int i = 0; i < 10; i++) {
        void *p = malloc(64);
        for (int j = 0; j < 50; j++)
            blocks[n++] = malloc(8);
        free(p);
    }
    for (int i = 0; i < n; i++)
        free(blocks[i]);

    n = 0;
    for (int d = 1; d <= 3; d++)
        for (int i = 0; i < 5; i++) {
            void *p = malloc(72);
            for (int j = 0; j < d; j++)
                blocks[n++] = malloc(24);
            free(p);
        }
    for (int i = 0; i < n; i++)
        free(blocks[i]);

    for (int i = 0; i < 5; i++)
        blocks[i] = malloc(1000);
    for (int i = 0; i < 5; i++)
        free(blocks[i]);
    for (int i = 0; i < 2; i++)
        blocks[i] = malloc(4000);
    for (int i = 0; i < 2; i++)
        free(blocks[i]);

    char *r = malloc(10);
    memset(r, 1, 10);
    r = realloc(r, 130);
    r = realloc(r, 1300);
    free(r);
    free(calloc(7, 3));
    for (int i = 0; i < 4; i++)
        free(malloc(20));

    void *shared[4];
    for (int i = 0; i < 4; i++)
        shared[i] = malloc(56);
    pthread_t t;
    pthread_create(&t, NULL, free_them, shared);
    pthread_join(t, NULL);

    leak_three();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "slow") == 0) {
        void *p = malloc(40);
        struct timespec ts = {0, 300 * 1000 * 1000};
        nanosleep(&ts, NULL);
        free(p);
        for (int i = 0; i < 4; i++)
            free(malloc(40));
    } else if (strcmp(mode, "many") == 0) {
        for (int i = 0; i < 30; i++)
            blocks[i] = malloc(24);
        for (int i = 0; i < 30; i++)
            free(blocks[i]);
    } else if (strcmp(mode, "wait") == 0) {
        for (int i = 0; i < 1000; i++)
            free(malloc(40));
        blocks[0] = malloc(77);
        (void)!write(1, "ready\n", 6);
        pause();
    } else if (strcmp(mode, "fork") == 0) {
        for (int i = 0; i < 4; i++)
            blocks[i] = malloc(96);
        pid_t child = fork();
        if (child == 0) {
            for (int i = 0; i < 4; i++)
                blocks[10 + i] = malloc(88);
            exit(0);
        }
        waitpid(child, NULL, 0);
        for (int i = 0; i < 4; i++)
            free(blocks[i]);
    } else {
        known_lifetimes();
    }
    return 0;
}
