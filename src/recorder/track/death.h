/*
 * death.h — a tracked block's death counted: its lifetime, the allocations in
 * between, a temporary or not, out of the side table, the heap figure lowered.
 * Inline for deaths.c (a free counted at once) and deferred.c (counted a few
 * frees late).
 */
#ifndef HSR_TRACK_DEATH_H
#define HSR_TRACK_DEATH_H

#include "count/heap.h"
#include "track/table.h"
#include "track/tracking.h"

static inline unsigned bin_of(uint64_t v)
{
    unsigned b = v ? 64u - (unsigned)__builtin_clzll(v) : 0;
    return b < HSR_LIFETIME_BINS ? b : HSR_LIFETIME_BINS - 1;
}

/* Who freed a block, and when: the freeing thread's table (NULL if none), the raw
 * clock, and that table's index and allocation number at the free. */
struct freer {
    const struct hsr_thread *t;
    uint64_t clock;
    uint32_t index;
    uint64_t seq;
};

/* A tracked block's death, once out of the table (slot s). */
static inline __attribute__((always_inline)) void record_death(const struct freer *f,
                                                               const struct hsr_slot *s,
                                                               struct hsr_track_rec *r)
{
    if (atomic_load_explicit(&hsr_track_peak_pending, memory_order_relaxed))
        hsr_track_peak_now();
    uint64_t lifetime = hsr_clock_raw_span(s->born, f->clock);
    uint32_t index = (uint32_t)(s->seq >> HSR_SEQ_BITS);
    uint64_t born = s->seq & HSR_SEQ_MASK, seq_then = born;
    if (HSR_LIKELY(f->index == index)) { /* usually the allocating thread frees */
        seq_then = f->seq;
    } else { /* another thread's block: its allocations up to the free */
        const struct hsr_thread *owner = hsr_thread_at(index);
        if (owner)
            seq_then = hsr_seq_at(owner, f->clock);
    }
    uint64_t between = (seq_then - born) & HSR_SEQ_MASK;
    int mine = f->t && f->t->index == 0;
    HSR_TRACK_BUMP(r, mine, frees, 1);
    HSR_TRACK_BUMP(r, mine, time_hist[bin_of(lifetime)], 1);
    HSR_TRACK_BUMP(r, mine, between_hist[bin_of(between)], 1);
    if (between <= hsr_track.temp_between && (!hsr_track.temp_ns || lifetime <= hsr_track.temp_ns))
        HSR_TRACK_BUMP(r, mine, temporaries, 1);
    hsr_split_add(&hsr_track_live_bytes, f->t, -(int64_t)r->size);
}

static inline void freer_here(struct freer *f, const struct hsr_thread *t, uint64_t clock)
{
    const struct hsr_track_thread *ts = t ? hsr_track_thread_peek(t) : NULL;
    f->t = t;
    f->clock = clock;
    f->index = t ? t->index : UINT32_MAX;
    f->seq = ts ? atomic_load_explicit(&ts->alloc_seq, memory_order_relaxed) : 0;
}

/* The block at address a freed (f): out of the table, its death counted, the heap
 * figure of f->t lowered. born_by, try_only: as hsr_slot_remove's. */
static inline __attribute__((always_inline)) void block_died(const struct freer *f, uint64_t a,
                                                             uint64_t born_by, int try_only)
{
    struct hsr_slot s;
    if (hsr_slot_remove(f->t, a, born_by, try_only, &s))
        return; /* hsr_track_untracked, or counted already */
    struct hsr_track_rec *r = (struct hsr_track_rec *)(s.rec & ~(uintptr_t)1);
    record_death(f, &s, r);
    if (HSR_LIKELY(f->t))
        hsr_heap_count((struct hsr_thread *)f->t, -(int64_t)r->size, (int)(s.rec & 1));
    else
        hsr_heap_unowned(-(int64_t)r->size, (int)(s.rec & 1));
}

#endif
