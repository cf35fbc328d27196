/*
 * heap.h — heap in use now, and the part a component (MPI) allocated (heap.c):
 * one process-wide figure, split so that the main thread adds without a locked
 * instruction.
 *
 * Off by default: with hsr_heap_watch set (by the timeline at init, and by
 * tracking and trace mode), every hook reports each block's birth and death
 * (hooks/blocks.h), and the heap in use is accounted per thread. Counts-only
 * recording leaves it 0: the hooks then pay one predictable branch.
 */
#ifndef HSR_HEAP_H
#define HSR_HEAP_H

#include "common.h"
#include "count/thread.h"

extern HSR_HIDDEN int hsr_heap_watch;
/* Bytes of heap in use now, and the part allocated inside component calls. Usable sizes (malloc_usable_size of the next
 * allocator), or requested sizes when tracking is on (hsr_heap_measure_requested). */
HSR_HIDDEN void hsr_heap_in_use(int64_t *total, int64_t *component);
HSR_HIDDEN int hsr_heap_measure_requested(void);

HSR_HIDDEN int64_t hsr_heap_usable(void *p);
extern HSR_HIDDEN size_t (*hsr_usable_size)(void *); /* found by hsr_heap_usable's first call */
/* The allocator underneath is glibc's and its chunk header reads as malloc_usable_size
 * answers (hsr_heap_header_usable): the usable size without a call (hooks/hot.c sets it). */
extern HSR_HIDDEN int hsr_usable_from_header;
static inline int64_t hsr_glibc_usable(const void *p);

/* hsr_heap_usable without the call when the allocator's function is known. */
static inline int64_t hsr_heap_usable_now(void *p)
{
    if (HSR_LIKELY(hsr_usable_from_header))
        return hsr_glibc_usable(p);
    size_t (*f)(void *) = __atomic_load_n(&hsr_usable_size, __ATOMIC_RELAXED);
    return HSR_LIKELY(f) ? (int64_t)f(p) : hsr_heap_usable(p);
}
HSR_HIDDEN void hsr_heap_add(int64_t bytes, int component);
HSR_HIDDEN void hsr_heap_unowned(int64_t bytes, int component); /* atomic: signal handlers */

/* The process's heap in use and its exact high-water marks (heap.c): one
 * process-wide figure, split so that the thread of table 0 (the main thread nearly
 * always) adds plainly and the others atomically (as tracking's struct hsr_split),
 * and a new maximum is kept. Three
 * maxima: the total, the component (MPI) part, the rest (the application). */
struct hsr_heap_live {
    _Atomic int64_t first, rest;
};
extern HSR_HIDDEN struct hsr_heap_live hsr_heap_live_total, hsr_heap_live_component;
extern HSR_HIDDEN _Atomic int64_t hsr_heap_max_total, hsr_heap_max_component, hsr_heap_max_app;
struct hsr_heap_peaks {
    int64_t total, component, app; /* bytes; 0 before the first block */
};
HSR_HIDDEN void hsr_heap_peaks(struct hsr_heap_peaks *p);
HSR_HIDDEN void hsr_heap_peaks_restart(void); /* fork child: peaks from the figure now */
HSR_HIDDEN void hsr_heap_raise(_Atomic int64_t *max, int64_t now); /* a new maximum */

static inline int64_t hsr_heap_live_add(struct hsr_heap_live *c, const struct hsr_thread *t,
                                        int64_t n)
{
    if (HSR_LIKELY(t->index == 0)) {
        int64_t v = atomic_load_explicit(&c->first, memory_order_relaxed) + n;
        atomic_store_explicit(&c->first, v, memory_order_relaxed);
        return v + atomic_load_explicit(&c->rest, memory_order_relaxed);
    }
    return atomic_fetch_add_explicit(&c->rest, n, memory_order_relaxed) + n +
           atomic_load_explicit(&c->first, memory_order_relaxed);
}

static inline int64_t hsr_heap_live_value(struct hsr_heap_live *c)
{
    return atomic_load_explicit(&c->first, memory_order_relaxed) +
           atomic_load_explicit(&c->rest, memory_order_relaxed);
}

/* hsr_heap_add with the calling thread's record at hand. A new maximum is looked for
 * only when the figure grows. */
static inline void hsr_heap_count(struct hsr_thread *t, int64_t bytes, int component)
{
    int64_t total = hsr_heap_live_add(&hsr_heap_live_total, t, bytes);
    if (component) {
        int64_t part = hsr_heap_live_add(&hsr_heap_live_component, t, bytes);
        if (bytes > 0 && HSR_UNLIKELY(part > atomic_load_explicit(&hsr_heap_max_component,
                                                                  memory_order_relaxed)))
            hsr_heap_raise(&hsr_heap_max_component, part);
    }
    if (bytes <= 0)
        return;
    if (HSR_UNLIKELY(total > atomic_load_explicit(&hsr_heap_max_total, memory_order_relaxed)))
        hsr_heap_raise(&hsr_heap_max_total, total);
    if (!component) {
        int64_t app = total - hsr_heap_live_value(&hsr_heap_live_component);
        if (HSR_UNLIKELY(app > atomic_load_explicit(&hsr_heap_max_app, memory_order_relaxed)))
            hsr_heap_raise(&hsr_heap_max_app, app);
    }
}

/* ---- the heap fast path (hooks/hooks.h, HSR_FAST_HEAP) ----
 * Counts-only recording that also watches the heap in use, over glibc's malloc: the
 * hooks add a block's usable size at its birth and take it away at its death, as
 * hsr_block_born/dying/dead do (outside component calls, which is the fast path's
 * test), with no call for the size: glibc keeps it in the word before the block
 * (flag bits 0-2; a mapped chunk, bit 1, has a 16-byte header, any other one 8 bytes
 * of it in the block: what malloc_usable_size answers for a block in use).
 * hsr_heap_header_usable() checks that reading against malloc_usable_size once, on
 * blocks of each kind; hot.c takes the path only where it agreed. */
HSR_HIDDEN int hsr_heap_header_usable(void);

static inline int64_t hsr_glibc_usable(const void *p)
{
    size_t word = ((const size_t *)p)[-1];
    return (int64_t)((word & ~(size_t)7) - 8 - ((word & 2) << 2));
}

/* The calling thread's record is attached: the fast path found its counts cached. */
static inline void hsr_heap_fast_born(void *p) { hsr_heap_count(hsr_self, hsr_glibc_usable(p), 0); }

static inline void hsr_heap_fast_dead(void *p)
{
    int64_t bytes = hsr_glibc_usable(p);
    struct hsr_heap_live *c = &hsr_heap_live_total;
    if (HSR_LIKELY(hsr_self->index == 0))
        atomic_store_explicit(&c->first,
                              atomic_load_explicit(&c->first, memory_order_relaxed) - bytes,
                              memory_order_relaxed);
    else
        atomic_fetch_sub_explicit(&c->rest, bytes, memory_order_relaxed);
}

#endif
