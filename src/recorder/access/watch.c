/*
 * watch.c — the watcher thread: every poll period (HEAPSCOPE_ACCESS_POLL_MS, 10 ms by
 * default) it settles the pool (settle.c: the live pool blocks' first touches and
 * read-first pages, the freed ones read, added up and dropped) and looks at the blocks
 * measured in place that are not yet seen touched. So a first touch is known to within
 * a period: after the last look that saw the block untouched, by the first that saw it
 * touched. A page seen on the zero page at a look was read while unwritten.
 *
 * Its CPU time is kept under 1/HSR_ACCESS_COST_SHARE of a CPU: the period stretches.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "access/internal.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/proc_files.h"
#include "core/single_thread.h"

uint64_t hsr_watch_poll_ns = HSR_ACCESS_POLL_MS_DEFAULT * 1000000ull;
static _Atomic int started;

static void look_once(void)
{
    hsr_access_lock();
    uint64_t now = hsr_now_ns(CLOCK_MONOTONIC); /* after every block born so far */
    for (uint32_t id = 1; id < hsr_access_blocks_used; id++) {
        struct hsr_access_block *b = &hsr_access_blocks[id];
        if (b->state == HSR_BLOCK_LIVE && b->kind == HSR_IN_PLACE && !b->by_ns) {
            struct hsr_access_look look;
            hsr_access_look_at(b, now, &look);
        }
    }
    hsr_access_unlock();
    hsr_access_settle(now, 1);
}

static void *watcher(void *arg)
{
    (void)arg;
    hsr_guard = 1;
    hsr_own_thread_mark(); /* (pagemap: core/proc_files.c) */
    uint64_t next = hsr_now_ns(CLOCK_MONOTONIC) + hsr_watch_poll_ns;
    for (;;) {
        struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        uint64_t cpu = hsr_now_ns(CLOCK_THREAD_CPUTIME_ID);
        look_once();
        uint64_t period = (hsr_now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu) * HSR_ACCESS_COST_SHARE;
        if (period < hsr_watch_poll_ns)
            period = hsr_watch_poll_ns;
        uint64_t now = hsr_now_ns(CLOCK_MONOTONIC);
        next += period;
        if (next <= now) /* late: no catching up */
            next = now + period;
    }
    return NULL;
}

void hsr_watch_start(void)
{
    if (atomic_exchange(&started, 1))
        return;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 128 * 1024);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* the program's signals are not ours to take */
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    /* it never calls the allocator, locks only atomic words and uses no stdio: it may
     * leave glibc's single-threaded flag set (core/single_thread.c) */
    int alone = hsr_single_threaded();
    pthread_t t;
    if (pthread_create(&t, &attr, watcher, NULL) != 0)
        hsr_warn("--access: cannot start the watcher thread: first touches are known only to "
                 "within each block's life, freed small blocks are read in batches");
    else
        pthread_setname_np(t, "heapscope-ac");
    if (alone)
        hsr_single_threaded_again();
    hsr_guard = saved_guard;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

/* The thread did not survive the fork. */
void hsr_watch_after_fork_child(void)
{
    atomic_store(&started, 0);
    hsr_watch_start();
}
