/*
 * births.c — tracking mode's births: each new block into the side table
 * (table.h) with its record (records.h), birth clock, allocating thread and that
 * thread's allocation number; the bytes live, and a new peak marked (peak.c).
 *
 * What a block costs is mostly memory traffic, so the hot paths avoid locked
 * instructions where one writer suffices: the main thread (table 0) adds to a set
 * of each record's counters (tracking.h) and to a part of the global figures
 * (struct hsr_split) plainly; the side table's shard lock remains.
 */
#define _GNU_SOURCE
#include "core/fast_clock.h"
#include "core/lifecycle.h"
#include "count/counting.h"
#include "count/heap.h"
#include "count/regions.h"
#include "count/thread.h"
#include "track/records.h"
#include "track/stamps.h"
#include "track/table.h"
#include "track/thread.h"
#include "track/track.h"
#include "track/tracking.h"

/* Any death waiting in the thread's ring? (Every entry: a birth may have cleared
 * the newest.) */
static int freed_pending(const struct hsr_track_thread *ts)
{
    for (unsigned i = 0; i < HSR_FREED_RING; i++)
        if (atomic_load_explicit(&ts->freed.e[i].addr, memory_order_relaxed))
            return 1;
    return 0;
}

static inline __attribute__((always_inline)) int track_born(struct hsr_thread *t, void *p,
                                                            uint64_t size, struct hsr_site site,
                                                            int component)
{
    struct hsr_track_thread *ts = hsr_track_thread_of(t);
    if (HSR_UNLIKELY(!ts)) {
        hsr_track_left_out(size);
        return -1;
    }
    uint64_t seq = atomic_load_explicit(&ts->alloc_seq, memory_order_relaxed) + 1;
    atomic_store_explicit(&ts->alloc_seq, seq, memory_order_relaxed);
    struct hsr_track_rec *r = site.type ? hsr_type_record(site.type, site.region, size)
                                        : hsr_size_record(site.region, size);
    uint64_t now = hsr_clock_raw();
    struct hsr_born_log *log = &ts->born_log[seq % HSR_BORN_LOG];
    atomic_store_explicit(&log->seq, seq, memory_order_relaxed); /* the number first: */
    atomic_thread_fence(memory_order_release);                   /* see born_log.c */
    atomic_store_explicit(&log->clock, now, memory_order_relaxed);
    struct hsr_slot s = {(uint64_t)(uintptr_t)p, now, (uintptr_t)r | (component ? 1u : 0u),
                         (uint64_t)t->index << HSR_SEQ_BITS | (seq & HSR_SEQ_MASK)};
    struct hsr_slot dead;
    /* a new epoch of allocation numbers logged first (the compact table's stamps) */
    int compact = hsr_stamp_seq_ready(ts, seq, now) == 0 && !ts->epochs_lost;
    int put = r && t->index < HSR_MAX_TABLES ? hsr_slot_insert(t, ts, &s, &dead, compact) : -1;
    uint64_t freed_at = 0;
    if (put > 0) /* the address's previous block, freed, its death not counted yet */
        freed_at = hsr_track_replaced_died(t, &dead, now);
    if (put < 0 || put == 2) {
        hsr_track_left_out(size);
        return -1;
    }
    if (put && HSR_UNLIKELY(freed_at >= now)) /* same clock reading (coarse clock): born later */
        hsr_slot_set_born(t, s.addr, freed_at + 1);
    int64_t live = hsr_split_add(&hsr_track_live_bytes, t, (int64_t)size);
    int64_t max = atomic_load_explicit(&hsr_track_max_bytes, memory_order_relaxed);
    if (HSR_UNLIKELY(live > max) && freed_pending(ts)) {
        /* a new maximum, or the thread's deferred frees not counted yet? Count
         * them first (a pending peak is copied at the first), then look again. */
        hsr_split_add(&hsr_track_live_bytes, t, -(int64_t)size);
        hsr_track_flush(t);
        live = hsr_split_add(&hsr_track_live_bytes, t, (int64_t)size);
    }
    int mine = t->index == 0;
    HSR_TRACK_BUMP(r, mine, allocs, 1);
    int64_t extra = hsr_heap_usable_now(p) - (int64_t)size;
    if (extra > 0)
        HSR_TRACK_BUMP(r, mine, extra_bytes, (uint64_t)extra);
    while (live > max) {
        if (atomic_compare_exchange_weak(&hsr_track_max_bytes, &max, live)) {
            uint64_t ns = hsr_clock_raw_ns(now);
            atomic_store(&hsr_track_max_ns,
                         hsr_start_mono_ns && ns > hsr_start_mono_ns ? ns - hsr_start_mono_ns : 0);
            atomic_store(&hsr_track_peak_pending, 1);
            break;
        }
    }
    return 0;
}

int hsr_track_born(void *p, uint64_t size, struct hsr_site site, int component)
{
    struct hsr_thread *t = hsr_self;
    if (HSR_UNLIKELY(!t) && !(t = hsr_thread_attach()))
        return -1;
    return track_born(t, p, size, site, component);
}

void hsr_track_birth(void *p, uint64_t size, struct hsr_site site)
{
    struct hsr_thread *t = hsr_self;
    if (HSR_UNLIKELY(!t) && !(t = hsr_thread_attach()))
        return;
    int component = hsr_place.in.component != 0;
    if (track_born(t, p, size, site, component) == 0)
        hsr_heap_count(t, (int64_t)size, component);
}
