/*
 * heap.c — how many bytes of heap are in use now, and how many of
 * them a component (the MPI library, "[MPI]") allocated.
 *
 * Every thread adds the bytes of the blocks it allocates to one process-wide figure
 * and subtracts those of the blocks it frees, split in two (heap.h, struct
 * hsr_heap_live): the thread of table 0 (the main thread nearly always) adds plainly
 * to its part, every other one atomically to the other: no lock, and a single-threaded
 * program no locked instruction.
 *
 * The measure:
 *   - tracking on: requested bytes. The tracking table knows each block's size and
 *     whether it was allocated inside a component call; a block is subtracted from
 *     the part it was added to. Untracked blocks (table full) are left out.
 *   - otherwise: usable bytes, malloc_usable_size() of the allocator underneath (over
 *     glibc, read from its chunk header: heap.h, the heap fast path), added at
 *     allocation and subtracted at free; a block freed inside a component call is
 *     subtracted from the component's part.
 * Blocks from the dlsym bootstrap buffer never reach here (free ignores them).
 *
 * The peaks (heap.h, hsr_heap_peaks): a figure above the maximum raises it, so the
 * peak is that of every allocation and free,
 * not of the timeline's samples: a buffer held for a microsecond between two
 * samples is in it. Exact for one allocating thread; with several, each thread's
 * add and its read of the others' part are not one step, so the peak may miss or
 * add the block another thread changes at that instant.
 * Blocks allocated before the recorder started are not in the figure; their
 * frees make it dip by as much (a few hundred bytes of the dynamic linker's).
 */
#define _GNU_SOURCE
#include "count/heap.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "count/thread.h"
#include "hooks/hooks.h"
#include "track/track.h"

int hsr_heap_watch;
size_t (*hsr_usable_size)(void *);
int hsr_usable_from_header;
static int usable_missing;

/* malloc_usable_size of the next allocator; 0 when it has none. */
int64_t hsr_heap_usable(void *p)
{
    if (hsr_usable_from_header)
        return hsr_glibc_usable(p);
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

/* Blocks of each kind glibc hands out: tiny, small, large (under the 128 KiB mmap
 * threshold) and mapped: above the largest dynamic threshold (32 MiB), so that freeing
 * it leaves glibc's threshold as it was; never touched, so it costs no memory. */
static const size_t probe_sizes[] = {0, 1, 24, 25, 200, 5000, 100000, (size_t)40 << 20};

int hsr_heap_header_usable(void)
{
    static int verdict = -1;
    if (verdict >= 0)
        return verdict;
    int saved = hsr_guard;
    hsr_guard = 1;
    verdict = hsr_real.malloc != NULL;
    for (size_t i = 0; verdict && i < sizeof probe_sizes / sizeof *probe_sizes; i++) {
        void *p = hsr_real.malloc(probe_sizes[i]);
        verdict = p && hsr_heap_usable(p) == hsr_glibc_usable(p) &&
                  hsr_glibc_usable(p) >= (int64_t)probe_sizes[i];
        if (p)
            hsr_real.free(p);
    }
    hsr_guard = saved;
    return verdict;
}

void hsr_heap_add(int64_t bytes, int component)
{
    struct hsr_thread *t = hsr_self;
    if (HSR_UNLIKELY(!t) && !(t = hsr_thread_attach()))
        return;
    hsr_heap_count(t, bytes, component);
}

int hsr_heap_measure_requested(void) { return hsr_track_on; }

/* Bytes counted by no thread (a signal handler's snapshot counting deaths: it may have
 * interrupted a thread inside a plain add): atomic adds to the shared part. */
void hsr_heap_unowned(int64_t bytes, int component)
{
    atomic_fetch_add(&hsr_heap_live_total.rest, bytes);
    if (component)
        atomic_fetch_add(&hsr_heap_live_component.rest, bytes);
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
    *total = hsr_heap_live_value(&hsr_heap_live_total);
    *component = hsr_heap_live_value(&hsr_heap_live_component);
}
