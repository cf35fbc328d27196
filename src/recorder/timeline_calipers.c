/*
 * timeline_calipers.c — MPI calipers: how much memory the MPI library takes besides
 * its heap blocks (shared-memory segments, registered buffers, mmaps).
 *
 * libheapscope_mpi.so calls these around every outermost MPI call (weak entry
 * points: without the recorder they are absent and the layer only forwards):
 *
 *   if (heapscope__caliper_begin("MPI_Send")) { ...call...; heapscope__caliper_end("MPI_Send"); }
 *
 * A measured call reads heap in use and smaps_rollup (RSS, PSS) before and after,
 * records "mpi-before"/"mpi-after" timeline samples labelled with the function, and
 * adds (RSS growth - heap growth) and (PSS growth - heap growth) over the call to
 * the totals: the library's non-heap memory, signed (a call may give memory back).
 * The heap growth is subtracted in full although untouched heap pages are not
 * resident: an estimate, exact when the library's heap blocks are touched. Without
 * heap in use (HEAPSCOPE_TIMELINE_HEAP=0) nothing is subtracted.
 *
 * Rate limit (HEAPSCOPE_CALIPER_MS, default 10): at most one measured call per
 * period in the process. The timeline's sampler thread arms a flag every period
 * (once an MPI call has been seen); the first call that finds it armed disarms it
 * and is measured. The others cost a load and a compare, and count themselves as
 * skipped in a per-thread slot (no shared write), so taken + skipped = outermost
 * MPI calls. Without the sampler thread, the time since the last measured call
 * decides (a clock read). MPI_Init, MPI_Init_thread, MPI_Finalize,
 * MPI_Alloc_mem and MPI_Win_allocate(_shared) are always measured: that is where
 * libraries map their big segments. HEAPSCOPE_CALIPER_MS=0 measures every call;
 * "off" none (the timeline stays on).
 */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>

#include "guard.h"
#include "recorder.h"

int64_t hs_caliper_ns = -1;

_Atomic int hs_calipers_active, hs_caliper_armed = 1, hs_sampler_running;

static _Atomic uint64_t last_ns;       /* clock of the last measured call (no sampler) */
static _Atomic uint64_t taken, skipped;
static _Atomic int64_t rss_delta, pss_delta;

/* Skipped calls, counted by each thread in its own slot (summed when written). */
#define SLOTS 4096u
static _Atomic uint64_t *slots;         /* mmap'd on first use */
static _Atomic uint32_t nslots;
static HS_TLS _Atomic uint64_t *my_slot;

static _Atomic uint64_t *slot_of_thread(void)
{
    if (!slots) {
        _Atomic uint64_t *fresh = hs_map(SLOTS * sizeof *fresh), *none = NULL;
        if (fresh && !atomic_compare_exchange_strong(&slots, &none, fresh))
            hs_unmap(fresh, SLOTS * sizeof *fresh);
    }
    uint32_t i = atomic_fetch_add(&nslots, 1);
    return slots && i < SLOTS ? &slots[i] : &skipped;   /* beyond: the shared counter */
}

static void count_skipped(void)
{
    _Atomic uint64_t *s = my_slot;
    if (HS_UNLIKELY(!s))
        s = my_slot = slot_of_thread();
    if (HS_UNLIKELY(s == &skipped))
        atomic_fetch_add_explicit(s, 1, memory_order_relaxed);
    else   /* only this thread writes its slot */
        atomic_store_explicit(s, atomic_load_explicit(s, memory_order_relaxed) + 1,
                              memory_order_relaxed);
}

static HS_TLS struct hs_sample before;  /* of this thread's call being measured */
static int clock_ready;                  /* hs_fast_clock_init done (first measured call) */

void hs_calipers_totals(struct hs_caliper_totals *t)
{
    t->taken = atomic_load_explicit(&taken, memory_order_relaxed);
    t->skipped = atomic_load_explicit(&skipped, memory_order_relaxed);
    uint32_t n = atomic_load(&nslots);
    for (uint32_t i = 0; slots && i < n && i < SLOTS; i++)
        t->skipped += atomic_load_explicit(&slots[i], memory_order_relaxed);
    t->rss_delta = atomic_load_explicit(&rss_delta, memory_order_relaxed);
    t->pss_delta = atomic_load_explicit(&pss_delta, memory_order_relaxed);
}

void hs_timeline_calipers_reset(void)
{
    atomic_store(&last_ns, 0);
    atomic_store(&taken, 0);
    atomic_store(&skipped, 0);
    /* slots keep their owners (the forking thread's is still its own): zero them */
    for (uint32_t i = 0; slots && i < SLOTS; i++)
        atomic_store(&slots[i], 0);
    atomic_store(&hs_caliper_armed, 1);
    atomic_store(&rss_delta, 0);
    atomic_store(&pss_delta, 0);
}

/* fn is "MPI_<Name>": one character tells most calls apart before any strcmp. */
static int always_measured(const char *fn)
{
    switch (fn[0] == 'M' && fn[1] == 'P' && fn[2] == 'I' && fn[3] == '_' ? fn[4] : 0) {
    case 'I': return strncmp(fn, "MPI_Init", 8) == 0;
    case 'F': return strcmp(fn, "MPI_Finalize") == 0;
    case 'A': return strcmp(fn, "MPI_Alloc_mem") == 0;
    case 'W': return strncmp(fn, "MPI_Win_allocate", 16) == 0;
    default: return 0;
    }
}

/* Claims this call for measuring under the rate limit: the armed flag, or without
 * the sampler thread the clock (the TSC where the kernel uses it, fast_clock.c). */
static int claim(const char *fn)
{
    if (hs_caliper_ns == 0)
        return 1;
    if (atomic_load_explicit(&hs_sampler_running, memory_order_relaxed)) {
        if (atomic_load_explicit(&hs_caliper_armed, memory_order_relaxed) &&
            atomic_exchange_explicit(&hs_caliper_armed, 0, memory_order_relaxed))
            return 1;
        return always_measured(fn);
    }
    uint64_t now = hs_fast_ns();
    uint64_t last = atomic_load_explicit(&last_ns, memory_order_relaxed);
    if ((last == 0 || now - last >= (uint64_t)hs_caliper_ns) &&
        atomic_compare_exchange_strong_explicit(&last_ns, &last, now, memory_order_relaxed,
                                                memory_order_relaxed))
        return 1;
    return always_measured(fn);
}

static void measure(struct hs_sample *s, unsigned kind, const char *fn)
{
    hs_timeline_measure(s, 1);
    s->kind = kind;
    s->region = hs_current_region();
    s->label = fn;
}

int heapscope__caliper_begin(const char *fn)
{
    if (hs_caliper_ns < 0 || !atomic_load_explicit(&hs_recording, memory_order_relaxed))
        return 0;
    if (HS_UNLIKELY(!atomic_load_explicit(&hs_calipers_active, memory_order_relaxed)))
        atomic_store(&hs_calipers_active, 1);   /* the sampler starts arming */
    if (!claim(fn)) {
        count_skipped();
        return 0;
    }
    int saved_guard = hs_guard;
    hs_guard = 1;
    if (HS_UNLIKELY(!clock_ready)) {   /* the first call, MPI_Init: calibrate (2 ms) */
        hs_fast_clock_init();
        clock_ready = 1;
    }
    measure(&before, HS_SAMPLE_MPI_BEFORE, fn);
    hs_timeline_add(&before);
    hs_guard = saved_guard;
    return 1;
}

void heapscope__caliper_end(const char *fn)
{
    if (hs_caliper_ns < 0)
        return;
    int saved_guard = hs_guard;
    hs_guard = 1;
    struct hs_sample after;
    measure(&after, HS_SAMPLE_MPI_AFTER, fn);
    hs_timeline_add(&after);
    int64_t heap = after.heap >= 0 && before.heap >= 0 ? after.heap - before.heap : 0;
    if (after.rss >= 0 && before.rss >= 0)
        atomic_fetch_add_explicit(&rss_delta, after.rss - before.rss - heap, memory_order_relaxed);
    if (after.pss >= 0 && before.pss >= 0)
        atomic_fetch_add_explicit(&pss_delta, after.pss - before.pss - heap, memory_order_relaxed);
    atomic_fetch_add_explicit(&taken, 1, memory_order_relaxed);
    hs_guard = saved_guard;
}
