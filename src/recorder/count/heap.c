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
 *
 * The peaks (heap.h, hsr_heap_peaks): every change is also added to a process-wide
 * figure (plain adds by the main thread, atomic ones by the others) and a figure
 * above the maximum raises it, so the peak is that of every allocation and free,
 * not of the timeline's samples: a buffer held for a microsecond between two
 * samples is in it. Exact for one allocating thread; with several, each thread's
 * add and its read of the others' part are not one step, so the peak may miss or
 * add the block another thread changes at that instant.
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
    atomic_fetch_add(&hsr_heap_live_total.rest, bytes);
    if (component) {
        atomic_fetch_add(&unowned_component, bytes);
        atomic_fetch_add(&hsr_heap_live_component.rest, bytes);
    }
}

struct hsr_heap_live hsr_heap_live_total, hsr_heap_live_component;
_Atomic int64_t hsr_heap_max_total, hsr_heap_max_component, hsr_heap_max_app;

void hsr_heap_raise(_Atomic int64_t *max, int64_t now)
{
    int64_t seen = atomic_load_explicit(max, memory_order_relaxed);
    while (now > seen && !atomic_compare_exchange_weak_explicit(
                             max, &seen, now, memory_order_relaxed, memory_order_relaxed))
        ;
}

void hsr_heap_peaks(struct hsr_heap_peaks *p)
{
    p->total = atomic_load(&hsr_heap_max_total);
    p->component = atomic_load(&hsr_heap_max_component);
    p->app = atomic_load(&hsr_heap_max_app);
}

void hsr_heap_peaks_restart(void)
{
    int64_t total = hsr_heap_live_value(&hsr_heap_live_total);
    int64_t part = hsr_heap_live_value(&hsr_heap_live_component);
    atomic_store(&hsr_heap_max_total, total > 0 ? total : 0);
    atomic_store(&hsr_heap_max_component, part > 0 ? part : 0);
    atomic_store(&hsr_heap_max_app, total - part > 0 ? total - part : 0);
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
