/*
 * blocks.h — what the hooks report about each block beyond counting it: its
 * birth (after the real allocation) and its death (before the real free, so no
 * other thread can be handed the same address while we still look it up).
 *
 * Everything is behind hsr_heap_watch, 0 unless heap accounting, tracking or the
 * trace is on: the counts-only hot path pays one predictable branch.
 * blocks.c passes each event on to heap accounting, tracking and the trace.
 *
 * A realloc is the death of the old block and the birth of the new one; since the
 * old block must leave the tables before the real realloc frees it, its death is
 * taken in two steps: hsr_block_dying before, then hsr_block_dead if the realloc
 * freed it, or hsr_block_revive if it failed and the old block lives on.
 */
#ifndef HSR_BLOCKS_H
#define HSR_BLOCKS_H

#include "counting.h"

/* What is known about a block on its way out. */
struct hsr_dying {
    void *p;
    int64_t bytes;        /* as accounted in the heap figure (0: not accounted) */
    int component;        /* accounted in the component part */
    uint64_t size;        /* requested size, when tracked */
    void *record;         /* tracking: its stack-type or per-size record, NULL if untracked */
    uint64_t born_clock;  /* tracking: the raw clock at birth (hsr_clock_raw, tracking.h) */
    uint64_t dying_clock; /* tracking: and when its free began */
    uint64_t trace_seq, trace_ns;  /* trace: the free event's number and time */
    uint64_t born_seq;    /* tracking: allocating table's index and allocation number */
};

HSR_HIDDEN void hsr_block_born(void *p, uint64_t size, struct hsr_site site);
/* trace.c, for blocks.c */
HSR_HIDDEN void hsr_trace_alloc(void *p, uint64_t size, struct hsr_site site, int64_t extra);
HSR_HIDDEN void hsr_trace_dying(struct hsr_dying *d);
HSR_HIDDEN void hsr_trace_free(struct hsr_dying *d);
/* heap_accounting.c, for blocks.c */
HSR_HIDDEN int64_t hsr_heap_usable(void *p);
extern HSR_HIDDEN size_t (*hsr_usable_size)(void *);  /* found by hsr_heap_usable's first call */

/* hsr_heap_usable without the call when the allocator's function is known. */
static inline int64_t hsr_heap_usable_now(void *p)
{
    size_t (*f)(void *) = __atomic_load_n(&hsr_usable_size, __ATOMIC_RELAXED);
    return HSR_LIKELY(f) ? (int64_t)f(p) : hsr_heap_usable(p);
}
HSR_HIDDEN void hsr_heap_add(int64_t bytes, int component);
HSR_HIDDEN void hsr_heap_unowned(int64_t bytes, int component);  /* atomic: signal handlers */
HSR_HIDDEN void hsr_block_dying(void *p, struct hsr_dying *d);
HSR_HIDDEN void hsr_block_dead(struct hsr_dying *d);
HSR_HIDDEN void hsr_block_revive(struct hsr_dying *d);

/* hsr_heap_add with the calling thread's table at hand. */
static inline void hsr_heap_count(struct hsr_thread *t, int64_t bytes, int component)
{
    atomic_store_explicit(&t->heap_bytes,
                          atomic_load_explicit(&t->heap_bytes, memory_order_relaxed) + bytes,
                          memory_order_relaxed);
    if (component)
        atomic_store_explicit(
            &t->heap_component_bytes,
            atomic_load_explicit(&t->heap_component_bytes, memory_order_relaxed) + bytes,
            memory_order_relaxed);
}

/* tracking.c: the common case of tracking mode (no trace) in one call each: the
 * birth or the whole death of a block, heap figure included (what hsr_block_born,
 * and hsr_block_dying + hsr_block_dead, do in several); the death is counted a few
 * frees later (tracking.c, "deferred deaths"). */
HSR_HIDDEN void hsr_track_birth(void *p, uint64_t size, struct hsr_site site);
HSR_HIDDEN void hsr_track_free(void *p);

/* Count an allocation (counting.h) and, when watching, report the block. */
static inline __attribute__((always_inline)) void hsr_note_alloc(unsigned api, uint64_t size,
                                                                void *p)
{
    struct hsr_site site = hsr_count_alloc(api, size, p == NULL);
    if (HSR_UNLIKELY(hsr_heap_watch) && p) {
        if (hsr_track_on && !hsr_trace_on)
            hsr_track_birth(p, size, site);
        else
            hsr_block_born(p, size, site);
    }
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
