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
 * period in the process (the first call that finds the period over claims it);
 * the others cost a clock read and a compare and are counted as skipped, so
 * taken + skipped = outermost MPI calls. MPI_Init, MPI_Init_thread, MPI_Finalize,
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

static _Atomic uint64_t last_ns;       /* CLOCK_MONOTONIC of the last measured call */
static _Atomic uint64_t taken, skipped;
static _Atomic int64_t rss_delta, pss_delta;

static HS_TLS struct hs_sample before;  /* of this thread's call being measured */

void hs_calipers_totals(struct hs_caliper_totals *t)
{
    t->taken = atomic_load_explicit(&taken, memory_order_relaxed);
    t->skipped = atomic_load_explicit(&skipped, memory_order_relaxed);
    t->rss_delta = atomic_load_explicit(&rss_delta, memory_order_relaxed);
    t->pss_delta = atomic_load_explicit(&pss_delta, memory_order_relaxed);
}

void hs_timeline_calipers_reset(void)
{
    atomic_store(&last_ns, 0);
    atomic_store(&taken, 0);
    atomic_store(&skipped, 0);
    atomic_store(&rss_delta, 0);
    atomic_store(&pss_delta, 0);
}

static int always_measured(const char *fn)
{
    return strncmp(fn, "MPI_Init", 8) == 0 || strcmp(fn, "MPI_Finalize") == 0 ||
           strcmp(fn, "MPI_Alloc_mem") == 0 || strncmp(fn, "MPI_Win_allocate", 16) == 0;
}

/* Claims this call for measuring under the rate limit. */
static int claim(const char *fn)
{
    if (hs_caliper_ns == 0)
        return 1;
    uint64_t now = hs_now_ns(CLOCK_MONOTONIC);
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
    if (!claim(fn)) {
        atomic_fetch_add_explicit(&skipped, 1, memory_order_relaxed);
        return 0;
    }
    int saved_guard = hs_guard;
    hs_guard = 1;
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
