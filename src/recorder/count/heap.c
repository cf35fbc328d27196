/*
 * heap.c — how many bytes of heap are in use now, and how many of
 * them a component (the MPI library, "[MPI]") allocated.
 *
 * Each thread adds the bytes of the blocks it allocates to its own counter and
 * subtracts those of the blocks it frees (struct hsr_thread, thread.h): no lock,
 * no shared cache line. A block freed by another thread makes that thread's
 * figure negative; the sum over all threads is right. Tables of ended threads are
 * adopted by new ones and keep their figure, so nothing is lost from the sum.
 *
 * The measure:
 *   - tracking on: requested bytes. The tracking table knows each block's size and
 *     whether it was allocated inside a component call; a block is subtracted from
 *     the part it was added to. Untracked blocks (table full) are left out.
 *   - otherwise: usable bytes, malloc_usable_size() of the allocator underneath,
 *     added at allocation and subtracted at free; a block freed inside a
 *     component call is subtracted from the component's part.
 * Blocks from the dlsym bootstrap buffer never reach here (free ignores them).
 * Blocks allocated before the recorder started are not in the figure; their
 * frees make it dip by as much (a few hundred bytes of the dynamic linker's).
 */
#define _GNU_SOURCE
#include "count/heap.h"
#include "core/lifecycle.h"
#include "count/thread.h"
#include "hooks/hooks.h"
#include "track/track.h"

int hsr_heap_watch;
size_t (*hsr_usable_size)(void *);
static int usable_missing;

/* malloc_usable_size of the next allocator; 0 when it has none. */
int64_t hsr_heap_usable(void *p)
{
    size_t (*f)(void *) = __atomic_load_n(&hsr_usable_size, __ATOMIC_RELAXED);
    if (HSR_UNLIKELY(!f)) {
        if (usable_missing)
            return 0;
        f = (size_t(*)(void *))hsr_next("malloc_usable_size");
        if (!f) {
            usable_missing = 1;
            hsr_warn("the allocator has no malloc_usable_size: heap in use is not measured");
            return 0;
        }
        __atomic_store_n(&hsr_usable_size, f, __ATOMIC_RELAXED);
    }
    return (int64_t)f(p);
}

void hsr_heap_add(int64_t bytes, int component)
{
    struct hsr_thread *t = hsr_self;
    if (HSR_UNLIKELY(!t) && !(t = hsr_thread_attach()))
        return;
    hsr_heap_count(t, bytes, component);
}

int hsr_heap_measure_requested(void) { return hsr_track_on; }

/* Bytes counted by no thread's table: deaths a signal handler's snapshot counted
 * (it may have interrupted a thread inside a plain add to its table). */
static _Atomic int64_t unowned, unowned_component;

void hsr_heap_unowned(int64_t bytes, int component)
{
    atomic_fetch_add(&unowned, bytes);
    if (component)
        atomic_fetch_add(&unowned_component, bytes);
}

void hsr_heap_in_use(int64_t *total, int64_t *component)
{
    int64_t sum = atomic_load(&unowned), part = atomic_load(&unowned_component);
    for (struct hsr_thread *t = hsr_threads_first(); t; t = hsr_threads_next(t)) {
        sum += atomic_load_explicit(&t->heap_bytes, memory_order_relaxed);
        part += atomic_load_explicit(&t->heap_component_bytes, memory_order_relaxed);
    }
    *total = sum;
    *component = part;
}
