/*
 * calipers.c — MPI calipers: how much memory the MPI library takes besides
 * its heap blocks (shared-memory segments, registered buffers, mmaps).
 *
 * libheapscope_mpi.so brackets the MPI calls that can allocate (layer_abi.h; the
 * local queries that cannot, MPI_Comm_rank ..., have no wrapper: src/mpi/
 * gen_wrappers.py). When the layer's armed flag is set, or the function maps memory,
 * its outermost call runs
 *
 *   if (heapscope__caliper_begin("MPI_Send", 0)) { ...call...; heapscope__caliper_end("MPI_Send"); }
 *
 * A measured call reads heap in use and the resident memory before and after,
 * records "mpi-before"/"mpi-after" timeline samples labelled with the function, and
 * adds (RSS growth - heap growth) and (PSS growth - heap growth) over the call to
 * the totals, less the growth of the recorder's own memory (own_memory.c: its tables
 * grow with what the call allocates): the library's non-heap memory, signed (a call
 * may give memory back).
 * The calls that map memory (MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Alloc_mem,
 * MPI_Win_allocate(_shared): `always`) are measured every time, RSS and PSS from
 * smaps_rollup (a page-table walk: 0.1 to several ms in an MPI process with big
 * shared segments); the others at the rate limit, RSS only, from statm (the kernel's
 * counters: a few us), their samples' PSS -1, so PSS growth is summed over the calls
 * that map memory. The heap growth is subtracted in full although untouched heap pages
 * are not resident: an estimate, exact when the library's heap blocks are touched.
 * Without heap in use (HEAPSCOPE_TIMELINE_HEAP=0) nothing is subtracted.
 *
 * Rate limit (HEAPSCOPE_CALIPER_MS, default 10): at most one measured call per
 * period in the process, and the period stretches so that the reads take at most
 * 1/HSR_CALIPER_COST_SHARE of the time: after a measured call whose reads took
 * 2 ms, the next one comes no sooner than 200 ms later. The timeline's sampler thread
 * arms the flag every period (once a layer has attached; the flag is the layer's own
 * word, which it gave at attach); the first call that finds it armed takes it and is
 * measured. Every other call costs the layer a load and a compare and never enters
 * the recorder; the layer counts each thread's calls in the thread's own slot, so
 * skipped = calls - taken (calls made inside another MPI call, never measured, are
 * among them). Without the sampler thread the flag stays armed and the time since the
 * last measured call decides (a clock read per call). HEAPSCOPE_CALIPER_MS=0 measures
 * every call; "off" none (the flag stays down; the timeline stays on).
 */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>

#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "count/regions.h"
#include "layer_abi.h"
#include "timeline/timeline.h"

int64_t hsr_caliper_ns = -1;

_Atomic int hsr_calipers_active, hsr_sampler_running;

/* The armed flag: the layer's own word once one attached (its calls read it with one
 * load), this one before. */
static _Atomic int own_flag = 1;
static _Atomic int *_Atomic armed_flag = &own_flag;

static _Atomic int *flag(void) { return atomic_load_explicit(&armed_flag, memory_order_relaxed); }

void hsr_calipers_flag(_Atomic int *layer)
{
    _Atomic int *own = &own_flag;
    if (layer && atomic_compare_exchange_strong(&armed_flag, &own, layer))
        atomic_store(layer, atomic_load(&own_flag));
}

void hsr_calipers_set_armed(int armed)
{
    atomic_store_explicit(flag(), armed, memory_order_relaxed);
}

static _Atomic uint64_t last_ns; /* clock of the last measured call (no sampler) */
static _Atomic uint64_t taken;
static _Atomic int64_t rss_delta, pss_delta;
static _Atomic int64_t rss_peak, pss_peak; /* of the running sums, from 0 */
static _Atomic int rss_seen, pss_seen;     /* a pair measured each (smaps_rollup: PSS) */

/* Calls, counted by each thread in its own slot through the layer (no shared write,
 * no atomic read-modify-write; summed when written): skipped = calls - taken. The
 * slots are reserved at once and touched as threads come (8 bytes each). */
static uint64_t *_Atomic slots;
static _Atomic uint32_t nslots;

uint64_t *hsr_calipers_thread_calls(void)
{
    if (!atomic_load(&slots)) {
        uint64_t *fresh = hsr_map(HSR_CALIPER_THREAD_SLOTS * sizeof *fresh), *none = NULL;
        if (fresh && !atomic_compare_exchange_strong(&slots, &none, fresh))
            hsr_unmap(fresh, HSR_CALIPER_THREAD_SLOTS * sizeof *fresh);
    }
    static uint64_t no_slots; /* no memory: calls go uncounted (skipped 0) */
    uint32_t i = atomic_fetch_add(&nslots, 1);
    uint64_t *s = atomic_load(&slots);
    if (!s)
        return &no_slots;
    return &s[i < HSR_CALIPER_THREAD_SLOTS
                  ? i
                  : HSR_CALIPER_THREAD_SLOTS - 1]; /* past a million threads: shared, racy */
}

static HSR_TLS struct hsr_sample before; /* of this thread's call being measured */
static HSR_TLS int before_pss;           /* it is measured with PSS (an `always` call) */
static HSR_TLS uint64_t before_cost;     /* ns its reads took */
/* What the last measured call's reads took (before and after, ns): smaps_rollup
 * walks every mapping, 0.1 to several ms in an MPI process with big shared
 * segments on a busy node. */
static _Atomic uint64_t read_cost_ns;

uint64_t hsr_caliper_period(void)
{
    uint64_t budget =
        atomic_load_explicit(&read_cost_ns, memory_order_relaxed) * HSR_CALIPER_COST_SHARE;
    return budget > (uint64_t)hsr_caliper_ns ? budget : (uint64_t)hsr_caliper_ns;
}

void hsr_calipers_totals(struct hsr_caliper_totals *t)
{
    t->taken = atomic_load_explicit(&taken, memory_order_relaxed);
    uint64_t calls = 0;
    uint32_t n = atomic_load(&nslots);
    for (uint32_t i = 0; slots && i < n && i < HSR_CALIPER_THREAD_SLOTS; i++)
        calls += __atomic_load_n(&slots[i], __ATOMIC_RELAXED);
    t->skipped = hsr_caliper_ns >= 0 && calls > t->taken ? calls - t->taken : 0;
    t->rss_delta = atomic_load_explicit(&rss_delta, memory_order_relaxed);
    t->pss_delta = atomic_load_explicit(&pss_delta, memory_order_relaxed);
    t->rss_peak =
        atomic_load(&rss_seen) ? atomic_load_explicit(&rss_peak, memory_order_relaxed) : -1;
    t->pss_peak =
        atomic_load(&pss_seen) ? atomic_load_explicit(&pss_peak, memory_order_relaxed) : -1;
}

void hsr_timeline_calipers_reset(void)
{
    atomic_store(&last_ns, 0);
    atomic_store(&taken, 0);
    /* slots keep their owners (the forking thread's is still its own): zero them */
    uint32_t n = atomic_load(&nslots);
    for (uint32_t i = 0; slots && i < n && i < HSR_CALIPER_THREAD_SLOTS; i++)
        __atomic_store_n(&slots[i], 0, __ATOMIC_RELAXED);
    hsr_calipers_set_armed(hsr_caliper_ns >= 0);
    atomic_store(&rss_delta, 0);
    atomic_store(&pss_delta, 0);
    atomic_store(&rss_peak, 0);
    atomic_store(&pss_peak, 0);
    atomic_store(&rss_seen, 0);
    atomic_store(&pss_seen, 0);
}

/* Claims this call for measuring under the rate limit: the armed flag, which the
 * sampler thread sets every period (the first call to find it set takes it); or,
 * without the sampler (it could not start), the clock — the flag then stays set,
 * and every call comes here. */
static int claim(int always)
{
    if (hsr_caliper_ns == 0 || always)
        return 1;
    if (atomic_load_explicit(&hsr_sampler_running, memory_order_relaxed))
        return atomic_exchange_explicit(flag(), 0, memory_order_relaxed);
    uint64_t now = hsr_now_ns(CLOCK_MONOTONIC);
    uint64_t last = atomic_load_explicit(&last_ns, memory_order_relaxed);
    return (last == 0 || now - last >= hsr_caliper_period()) &&
           atomic_compare_exchange_strong_explicit(&last_ns, &last, now, memory_order_relaxed,
                                                   memory_order_relaxed);
}

static void measure(struct hsr_sample *s, unsigned kind, const char *fn, int with_pss)
{
    hsr_timeline_measure(s, with_pss ? HSR_MEASURE_PSS : 0);
    s->kind = kind;
    s->region = hsr_current_region();
    s->label = fn;
}

int heapscope__caliper_begin(const char *fn, int always)
{
    if (hsr_caliper_ns < 0 || !atomic_load_explicit(&hsr_recording, memory_order_relaxed) ||
        !claim(always))
        return 0;
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    uint64_t t0 = hsr_now_ns(CLOCK_MONOTONIC);
    before_pss = always;
    measure(&before, HS_SAMPLE_MPI_BEFORE, fn, always);
    before_cost = hsr_now_ns(CLOCK_MONOTONIC) - t0;
    hsr_timeline_add(&before);
    hsr_guard = saved_guard;
    return 1;
}

/* One measured call's growth d added to the running sum, and the sum's peak raised to
 * it (the job file reports the peak: a net sum falls when MPI_Finalize unmaps what
 * became resident outside measured calls, and it did not match the reader's figure). */
static void add_growth(_Atomic int64_t *sum, _Atomic int64_t *peak, int64_t d)
{
    int64_t now = atomic_fetch_add_explicit(sum, d, memory_order_relaxed) + d;
    int64_t top = atomic_load_explicit(peak, memory_order_relaxed);
    while (now > top && !atomic_compare_exchange_weak_explicit(
                            peak, &top, now, memory_order_relaxed, memory_order_relaxed))
        ;
}

void heapscope__caliper_end(const char *fn)
{
    if (hsr_caliper_ns < 0)
        return;
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    struct hsr_sample after;
    uint64_t t0 = hsr_now_ns(CLOCK_MONOTONIC);
    measure(&after, HS_SAMPLE_MPI_AFTER, fn, before_pss);
    atomic_store_explicit(&read_cost_ns, before_cost + hsr_now_ns(CLOCK_MONOTONIC) - t0,
                          memory_order_relaxed);
    hsr_timeline_add(&after);
    int64_t heap = after.heap >= 0 && before.heap >= 0 ? after.heap - before.heap : 0;
    /* the recorder's tables grow with what the call allocates: not the library's */
    int64_t own = after.own >= 0 && before.own >= 0 ? after.own - before.own : 0;
    if (after.rss >= 0 && before.rss >= 0) {
        add_growth(&rss_delta, &rss_peak, after.rss - before.rss - heap - own);
        atomic_store_explicit(&rss_seen, 1, memory_order_relaxed);
    }
    if (after.pss >= 0 && before.pss >= 0) {
        add_growth(&pss_delta, &pss_peak, after.pss - before.pss - heap - own);
        atomic_store_explicit(&pss_seen, 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&taken, 1, memory_order_relaxed);
    hsr_guard = saved_guard;
}
