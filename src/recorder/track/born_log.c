/*
 * born_log.c — what allocation number a thread had reached at a given time,
 * from its log of birth clocks (struct hsr_born_log in its tracking state,
 * thread.h; written by the thread at each tracked birth, births.c). A death
 * counted late by another thread than the block's allocator (deferred.c) counts
 * the allocations in between up to the free with it.
 */
#define _GNU_SOURCE
#include "count/thread.h"
#include "track/thread.h"

/* The birth clock of table o's allocation number k from its log: 0 if k is not
 * written yet (a birth in progress, after any free being looked up), UINT64_MAX if
 * k has been overwritten by a later number (the owner writes the number first). */
static uint64_t born_clock(const struct hsr_track_thread *o, uint64_t k)
{
    const struct hsr_born_log *e = &o->born_log[k % HSR_BORN_LOG];
    uint64_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);
    if (s < k)
        return 0;
    uint64_t born = atomic_load_explicit(&e->clock, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (s > k || atomic_load_explicit(&e->seq, memory_order_relaxed) != k)
        return UINT64_MAX;
    return born ? born : 1;
}

/* The allocation number table o had reached at raw clock `clock` (its last
 * allocation born at or before it), by binary search in its log of birth clocks;
 * its number now if the log no longer reaches back that far. */
uint64_t hsr_seq_at(const struct hsr_thread *t, uint64_t clock)
{
    const struct hsr_track_thread *o = hsr_track_thread_peek(t);
    if (!o)
        return 0; /* it has allocated nothing tracked */
    uint64_t now = atomic_load_explicit(&o->alloc_seq, memory_order_acquire);
    uint64_t first = now >= HSR_BORN_LOG ? now - HSR_BORN_LOG + 1 : 1;
    uint64_t lo = first, hi = now; /* the answer is in [first - 1, now] */
    while (lo <= hi && hi) {
        uint64_t mid = lo + (hi - lo) / 2, born = born_clock(o, mid);
        if (born == UINT64_MAX)
            return now; /* the log moved on under us */
        if (born && born <= clock)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return hi >= first || first == 1 ? hi : now;
}
