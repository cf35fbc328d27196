/* Frees whose deaths tracking mode counts a few frees later (src/recorder/track/
 * deferred.c), in the cases where the wait could show (tests/e2e/test_track_deferred_deaths.py).
 *
 * Argument "reuse" (run with GLIBC_TUNABLES=glibc.malloc.tcache_count=0:
 * glibc.malloc.arena_max=1, so that a block freed by one thread is the next one
 * of its size another thread gets):
 *   main: an 8000-B block freed at once (the heap peak: later births make no new
 *   maximum, which would count main's waiting deaths first); x = malloc(40),
 *   freed at once; 200 ms later, three 24-B blocks (kept), then lets the helper
 *   thread go;
 *   helper: y = malloc(40) (x's address), freed at once; prints "reused" if so.
 *   x's death waits in main's ring when y is born at its address: x must count as
 *   a temporary that lived microseconds, not 200 ms with 3 allocations in between.
 * Argument "idle":
 *   region "work": 10 blocks of 300 B allocated and freed, ending with nothing of
 *   it live (its end sample: the heap of its begin sample);
 *   a worker allocates 5 blocks of 120 B, frees them in order, says so and waits
 *   forever; main returns meanwhile: the exit snapshot counts the 5 deaths.
 * Argument "peak": 7 x 64 B live together (the peak, 448 B), all freed, then 64 B
 *   (the last address freed: its birth counts that death) and 300 B: 364 B live,
 *   no new peak, though six deaths still wait in the ring.
 * Argument "usr1": three times 5 x 1000 B allocated, freed, and a SIGUSR1 snapshot
 *   (its handler counts the deaths in the ring); then region "after": the heap is 0.
 * Argument "xfree": a helper thread frees main's 40-B block at once and waits; main
 *   then allocates 100 x 24 B before the helper ends (and counts its deaths): the
 *   40-B block still had nothing allocated by main in between at its free.
 * Argument "full" (HEAPSCOPE_TRACK_MAX_BLOCKS=10): 10 x 48 B kept, the last one
 *   freed and 48 B allocated again (its address, the dead block still in the full
 *   table): tracked, replacing the dead block.
 * Argument "wait": an 8000-B block freed (the peak), 1000 x 40 B freed at once, a
 *   77-B block kept (no new maximum: the last 40-B death still waits in the ring),
 *   then "ready" on stdout and wait for a signal.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "heapscope.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int go, done;
static void *x_address;
static int reused;

static void wait_for(int *flag)
{
    pthread_mutex_lock(&lock);
    while (!*flag)
        pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
}

static void raise_flag(int *flag)
{
    pthread_mutex_lock(&lock);
    *flag = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

static void *helper(void *arg)
{
    (void)arg;
    wait_for(&go);
    void *y = malloc(40);
    reused = y == x_address;
    free(y);
    return NULL;
}

static void reuse(void)
{
    pthread_t t;
    pthread_create(&t, NULL, helper, NULL);   /* before x: its own allocations first */
    free(malloc(8000));
    void *x = malloc(40);
    x_address = x;
    free(x);
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    void *keep[3];
    for (int i = 0; i < 3; i++)
        keep[i] = malloc(24);
    raise_flag(&go);
    pthread_join(t, NULL);
    printf("%s\n", reused ? "reused" : "not reused");
    (void)keep;
}

static void *idle_worker(void *arg)
{
    (void)arg;
    void *b[5];
    for (int i = 0; i < 5; i++)
        b[i] = malloc(120);
    for (int i = 0; i < 5; i++)
        free(b[i]);
    raise_flag(&done);
    wait_for(&go);   /* never */
    return NULL;
}

static void idle(void)
{
    HEAPSCOPE_REGION_BEGIN("work");
    void *b[10];
    for (int i = 0; i < 10; i++)
        b[i] = malloc(300);
    for (int i = 0; i < 10; i++)
        free(b[i]);
    HEAPSCOPE_REGION_END();

    pthread_t t;
    pthread_create(&t, NULL, idle_worker, NULL);
    wait_for(&done);
}

static int handed, freed;
static void *handed_block;

static void *free_handed(void *arg)
{
    (void)arg;
    wait_for(&handed);
    free(handed_block);
    raise_flag(&freed);
    wait_for(&go);
    return NULL;
}

static void xfree(void)
{
    pthread_t t;
    pthread_create(&t, NULL, free_handed, NULL);
    handed_block = malloc(40);
    raise_flag(&handed);
    wait_for(&freed);
    void *keep[100];
    for (int i = 0; i < 100; i++)
        keep[i] = malloc(24);
    raise_flag(&go);
    pthread_join(t, NULL);
    for (int i = 0; i < 100; i++)
        free(keep[i]);
}

static void full(void)
{
    void *b[10];
    for (int i = 0; i < 10; i++)
        b[i] = malloc(48);
    free(b[9]);
    b[9] = malloc(48);
    (void)b;
}

static void peak(void)
{
    void *a[7];
    for (int i = 0; i < 7; i++)
        a[i] = malloc(64);
    for (int i = 0; i < 7; i++)
        free(a[i]);
    void *again = malloc(64);
    void *big = malloc(300);
    free(big);
    free(again);
}

static void usr1(void)
{
    for (int round = 0; round < 3; round++) {
        void *b[5];
        for (int i = 0; i < 5; i++)
            b[i] = malloc(1000);
        for (int i = 0; i < 5; i++)
            free(b[i]);
        raise(SIGUSR1);
    }
    HEAPSCOPE_REGION_BEGIN("after");
    HEAPSCOPE_REGION_END();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "reuse") == 0)
        reuse();
    else if (strcmp(mode, "idle") == 0)
        idle();
    else if (strcmp(mode, "peak") == 0)
        peak();
    else if (strcmp(mode, "full") == 0)
        full();
    else if (strcmp(mode, "xfree") == 0)
        xfree();
    else if (strcmp(mode, "usr1") == 0)
        usr1();
    else if (strcmp(mode, "wait") == 0) {
        free(malloc(8000));
        for (int i = 0; i < 1000; i++)
            free(malloc(40));
        void *kept = malloc(77);
        (void)!write(1, "ready\n", 6);
        pause();
        free(kept);
    }
    else
        return 2;
    return 0;
}
