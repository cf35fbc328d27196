/*
 * threads.c — the thread records (thread.h): one per thread, mmap'd on its first
 * allocation, in an append-only list and by index.
 *
 * Threads that end hand their record back (pthread key destructor); a new thread
 * adopts a free record and keeps adding to its counts — the counts are summed
 * over threads anyway, and the memory stays bounded by the peak number of
 * threads. The subsystems' per-thread state hanging off a record goes with it.
 *
 * A thread still frees after its key destructors: a detached thread's end frees
 * glibc's thread-local blocks (its DTV) through our free. So the destructor keeps
 * the record the thread's own (hsr_self stays) and marks it ending with the thread's
 * id; a new thread adopts it only once that thread is gone (tgkill: ESRCH). Handing
 * it back at once counted such a thread twice (its late free attached a second
 * record) and left that second record in use for good (65 threads "seen" as 69 to
 * 117 with detached threads).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/guard.h"
#include "core/pool.h"
#include "count/thread.h"
#include "track/track.h"

HSR_TLS struct hsr_tls hsr_tls = {.counts_region = HSR_NO_REGION};
static struct hsr_thread *_Atomic threads;
static _Atomic uint64_t threads_seen;
static pthread_key_t exit_key;
static int have_exit_key;
static HSR_TLS int stand_in; /* a recorder thread doing the program's exit: not counted */

enum { IDLE = 0, IN_USE = 1, ENDING = 2 }; /* hsr_thread.in_use */

static _Atomic uint32_t tables;                      /* tables created; index of the next */
static struct hsr_thread *_Atomic *_Atomic by_index; /* index -> table (mmap'd on first use) */

static void index_table(struct hsr_thread *t)
{
    struct hsr_thread *_Atomic *ix = atomic_load(&by_index);
    if (t->index >= HSR_MAX_TABLES)
        return;
    if (!ix) {
        struct hsr_thread *_Atomic *fresh = hsr_map(HSR_MAX_TABLES * sizeof *fresh);
        if (!fresh)
            return;
        if (atomic_compare_exchange_strong(&by_index, &ix, fresh))
            ix = fresh;
        else
            hsr_unmap(fresh, HSR_MAX_TABLES * sizeof *fresh);
    }
    atomic_store_explicit(&ix[t->index], t, memory_order_release);
}

uint64_t hsr_threads_seen(void) { return atomic_load(&threads_seen); }
struct hsr_thread *hsr_thread_at(uint32_t index)
{
    struct hsr_thread *_Atomic *ix = atomic_load_explicit(&by_index, memory_order_acquire);
    return index < HSR_MAX_TABLES && ix ? atomic_load_explicit(&ix[index], memory_order_acquire)
                                        : NULL;
}
struct hsr_thread *hsr_threads_first(void)
{
    return atomic_load_explicit(&threads, memory_order_acquire);
}
struct hsr_thread *hsr_threads_next(struct hsr_thread *t) { return t->next; }
struct hsr_stack_table *hsr_thread_stacks(struct hsr_thread *t)
{
    return atomic_load_explicit(&t->stacks, memory_order_acquire);
}
struct hsr_stack_table **hsr_thread_stacks_slot(struct hsr_thread *t)
{
    return (struct hsr_stack_table **)&t->stacks;
}

static void thread_exit(void *arg)
{
    struct hsr_thread *t = arg;
    if (hsr_track_on && t == hsr_self) { /* its deferred frees, before the table is handed back */
        int saved_guard = hsr_guard;
        hsr_guard = 1;
        hsr_track_flush(t);
        hsr_guard = saved_guard;
    }
    t->owner_tid = (int)syscall(SYS_gettid); /* frees after this still count here */
    atomic_store_explicit(&t->in_use, ENDING, memory_order_release);
}

/* A record whose thread has ended for good (its id gone; ours: a reused id). */
static int owner_gone(const struct hsr_thread *t)
{
    int me = (int)syscall(SYS_gettid);
    if (t->owner_tid == me)
        return 1;
    int saved = errno;
    int gone = syscall(SYS_tgkill, getpid(), t->owner_tid, 0) != 0 && errno == ESRCH;
    errno = saved;
    return gone;
}

static int adopt(struct hsr_thread *t)
{
    int state = IDLE;
    if (atomic_compare_exchange_strong(&t->in_use, &state, IN_USE))
        return 1;
    return state == ENDING && owner_gone(t) &&
           atomic_compare_exchange_strong(&t->in_use, &state, IN_USE);
}

void hsr_thread_stand_in(void) { stand_in = 1; }

void hsr_threads_init(void)
{
    if (!have_exit_key && pthread_key_create(&exit_key, thread_exit) == 0)
        have_exit_key = 1;
}

struct hsr_thread *hsr_thread_attach(void)
{
    struct hsr_thread *t;
    for (t = hsr_threads_first(); t; t = t->next)
        if (adopt(t))
            break;
    if (!t) {
        t = hsr_map(sizeof *t);
        if (!t)
            return NULL;
        t->in_use = 1;
        t->index = atomic_fetch_add(&tables, 1);
        index_table(t);
        struct hsr_thread *head = atomic_load(&threads);
        do
            t->next = head;
        while (!atomic_compare_exchange_weak(&threads, &head, t));
    }
    hsr_self = t;
    if (!stand_in)
        atomic_fetch_add(&threads_seen, 1);
    if (have_exit_key)
        pthread_setspecific(exit_key, t);
    return t;
}

/* In a forked child only the forking thread exists: every record but ours is
 * handed back (counters.c zeroes the counts). */
void hsr_threads_after_fork_child(void)
{
    for (struct hsr_thread *t = hsr_threads_first(); t; t = t->next)
        if (t != hsr_self)
            t->in_use = 0;
    atomic_store(&threads_seen, hsr_self ? 1 : 0);
}
