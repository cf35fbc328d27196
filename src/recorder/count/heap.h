/*
 * heap.h — heap in use now, and the part a component (MPI) allocated (heap.c):
 * each thread adds to its own figure in its thread record.
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
/* Bytes of heap in use now (summed over the threads' counters), and the part
 * allocated inside component calls. Usable sizes (malloc_usable_size of the next
 * allocator), or requested sizes when tracking is on (hsr_heap_measure_requested). */
HSR_HIDDEN void hsr_heap_in_use(int64_t *total, int64_t *component);
HSR_HIDDEN int hsr_heap_measure_requested(void);

HSR_HIDDEN int64_t hsr_heap_usable(void *p);
extern HSR_HIDDEN size_t (*hsr_usable_size)(void *); /* found by hsr_heap_usable's first call */

/* hsr_heap_usable without the call when the allocator's function is known. */
static inline int64_t hsr_heap_usable_now(void *p)
{
    size_t (*f)(void *) = __atomic_load_n(&hsr_usable_size, __ATOMIC_RELAXED);
    return HSR_LIKELY(f) ? (int64_t)f(p) : hsr_heap_usable(p);
}
HSR_HIDDEN void hsr_heap_add(int64_t bytes, int component);
HSR_HIDDEN void hsr_heap_unowned(int64_t bytes, int component); /* atomic: signal handlers */

/* hsr_heap_add with the calling thread's record at hand. */
static inline void hsr_heap_count(struct hsr_thread *t, int64_t bytes, int component)
{
    atomic_store_explicit(&t->heap_bytes,
                          atomic_load_explicit(&t->heap_bytes, memory_order_relaxed) + bytes,
                          memory_order_relaxed);
    if (component)
        atomic_store_explicit(&t->heap_component_bytes,
                              atomic_load_explicit(&t->heap_component_bytes, memory_order_relaxed) +
                                  bytes,
                              memory_order_relaxed);
}

#endif
