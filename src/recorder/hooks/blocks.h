/*
 * blocks.h — what the hooks report about each block beyond counting it: its
 * birth (after the real allocation) and its death (before the real free, so no
 * other thread can be handed the same address while we still look it up).
 *
 * Everything is behind hsr_heap_watch (count/heap.h), 0 unless heap accounting,
 * tracking or the trace is on: the counts-only hot path pays one predictable
 * branch. blocks.c passes each event on to heap accounting, tracking and the trace.
 *
 * A realloc is the death of the old block and the birth of the new one; since the
 * old block must leave the tables before the real realloc frees it, its death is
 * taken in two steps: hsr_block_dying before, then hsr_block_dead if the realloc
 * freed it, or hsr_block_revive if it failed and the old block lives on.
 */
#ifndef HSR_BLOCKS_H
#define HSR_BLOCKS_H

#include "count/counting.h"
#include "count/heap.h"
#include "trace/trace.h"
#include "track/track.h"

/* What is known about a block on its way out. */
struct hsr_dying {
    void *p;
    int64_t bytes;        /* as accounted in the heap figure (0: not accounted) */
    int component;        /* accounted in the component part */
    uint64_t size;        /* requested size, when tracked */
    void *record;         /* tracking: its stack-type or per-size record, NULL if untracked */
    uint64_t born_clock;  /* tracking: the raw clock at birth (hsr_clock_raw, core/fast_clock.h) */
    uint64_t dying_clock; /* tracking: and when its free began */
    uint64_t trace_seq, trace_ns; /* trace: the free event's number and time */
    uint64_t born_seq;            /* tracking: allocating table's index and allocation number */
};

HSR_HIDDEN void hsr_block_born(void *p, uint64_t size, struct hsr_site site);
HSR_HIDDEN void hsr_block_dying(void *p, struct hsr_dying *d);
HSR_HIDDEN void hsr_block_dead(struct hsr_dying *d);
HSR_HIDDEN void hsr_block_revive(struct hsr_dying *d);

/* Count an allocation (count/counting.h) and, when watching, report the block; returns
 * where it was counted. In the
 * common case of tracking mode (no trace) tracking takes the birth or the whole
 * death in one call each (track/track.h). */
static inline __attribute__((always_inline)) struct hsr_site hsr_note_alloc(unsigned api,
                                                                            uint64_t size, void *p)
{
    struct hsr_site site = hsr_count_alloc(api, size, p == NULL);
    if (HSR_UNLIKELY(hsr_heap_watch) && p) {
        if (hsr_track_on && !hsr_trace_on)
            hsr_track_birth(p, size, site);
        else
            hsr_block_born(p, size, site);
    }
    return site; /* access/: a sampled block's stack type and region */
}

/* Before the real free of p (not NULL). */
static inline __attribute__((always_inline)) void hsr_note_free(void *p)
{
    if (HSR_UNLIKELY(hsr_heap_watch)) {
        if (hsr_track_on && !hsr_trace_on) {
            hsr_track_free(p);
            return;
        }
        struct hsr_dying d;
        hsr_block_dying(p, &d);
        hsr_block_dead(&d);
    }
}

#endif
