/*
 * timeline.c — heap in use, RSS and PSS over time, written to the profile as the
 * run goes (the MPI calipers use it too: calipers.c).
 *
 * Who samples:
 *   the sampler thread     every HEAPSCOPE_TIMELINE_MS: heap + smaps_rollup (RSS, PSS);
 *                          longer when the reads would take over 1% of a CPU (big RSS)
 *   region boundaries      heapscope_region_begin/end (process-wide regions): heap +
 *                          RSS from statm (~4 us; smaps_rollup would cost ~25 us)
 *   MPI calipers           before/after a measured MPI call: heap + smaps_rollup
 *   snapshots              a "final" sample (heap + smaps_rollup), then a flush
 * Heap in use is in the samples when the hooks watch blocks (hsr_heap_watch: asked
 * with HEAPSCOPE_TIMELINE_HEAP=1, or tracking on), else -1.
 *
 * Where samples go: a bounded lock-free ring (HSR_TIMELINE_RING slots; multi-producer, one
 * consumer at a time), so any thread and a signal handler may append without a
 * lock. The holder of the flush token drains it into TIMELINE_REGIONS + TIMELINE
 * chunks (format: profile_format.h) and appends them with one hsr_profile_write.
 * Flushes happen every HEAPSCOPE_TIMELINE_FLUSH_MS (sampler thread), when the ring
 * is half full (sampler) or three-quarters full (the appending thread, which waits
 * for the flush in progress when it finds the ring full), and before every
 * snapshot. A sample that still finds no room is dropped and counted (samples_lost).
 *
 * The sampler thread is created after the profile file is open (and again in a
 * fork child), with every signal blocked (signals go to the program's threads),
 * the re-entrancy guard set, and marked a background writer: once the process
 * starts ending (hsr_profile_seal) it writes no more. It also takes the periodic
 * snapshots (HEAPSCOPE_SNAPSHOT_MS; it runs for them alone when the timeline is
 * off), and never keeps the process alive: once main has called pthread_exit it
 * looks whether the program's last thread has ended (core/last_thread.c).
 * Memory: the ring (HSR_TIMELINE_RING x 64 bytes, mmap) and the flush buffers (mmap); nothing
 * from the program's allocator.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/fast_clock.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "core/proc_files.h"
#include "core/single_thread.h"
#include "count/heap.h"
#include "count/regions.h"
#include "output/profile_writer.h"
#include "output/snapshot.h"
#include "timeline/own_memory.h"
#include "timeline/timeline.h"

int hsr_timeline_on;
uint64_t hsr_snapshot_period_ns;
static uint64_t interval_ns, flush_ns;

/* ---- settings ---- */

/* A non-negative integer setting in ms, or `fallback` (with a warning) when bad. */
static long ms_setting(const char *name, long fallback, long min)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    char *end;
    long ms = strtol(v, &end, 10);
    if (*end || ms < min || ms > 86400000L) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s must be an integer number of ms >= %ld, using %ld", name, min,
                 fallback);
        hsr_warn(msg);
        return fallback;
    }
    return ms;
}

void hsr_timeline_settings(void)
{
    long ms = ms_setting("HEAPSCOPE_TIMELINE_MS", HSR_TIMELINE_MS_DEFAULT, 0);
    hsr_snapshot_period_ns = (uint64_t)ms_setting("HEAPSCOPE_SNAPSHOT_MS", 0, 0) * 1000000u;
    hsr_timeline_on = ms > 0;
    interval_ns = (uint64_t)ms * 1000000u;
    flush_ns =
        (uint64_t)ms_setting("HEAPSCOPE_TIMELINE_FLUSH_MS", HSR_TIMELINE_FLUSH_MS_DEFAULT, 10) *
        1000000u;
    const char *cal = getenv("HEAPSCOPE_CALIPER_MS");
    if (cal && strcmp(cal, "off") == 0)
        hsr_caliper_ns = -1;
    else
        hsr_caliper_ns = ms_setting("HEAPSCOPE_CALIPER_MS", HSR_CALIPER_MS_DEFAULT, 0) * 1000000;
    if (!hsr_timeline_on)
        hsr_caliper_ns = -1; /* caliper samples are timeline samples */
    hsr_calipers_set_armed(hsr_caliper_ns >= 0);
    /* Heap in use costs every allocation and free a malloc_usable_size call and a
     * counter update (hsr_heap_watch): about +10-25% CPU on the churn benchmark, more
     * than the counts-only goal allows, so it is asked for (record --mpi asks; tracking
     * watches blocks anyway, and then the figure comes free). */
    const char *heap = getenv("HEAPSCOPE_TIMELINE_HEAP");
    if (hsr_timeline_on && heap && strcmp(heap, "1") == 0)
        hsr_heap_watch = 1;
    else if (heap && *heap && strcmp(heap, "0") != 0 && strcmp(heap, "1") != 0)
        hsr_warn("HEAPSCOPE_TIMELINE_HEAP must be 0 or 1, using 0");
}

/* ---- the ring ---- */

struct slot {
    _Atomic uint64_t seq; /* == position + 1 once the sample at `position` is written */
    struct hsr_sample s;
};

static struct slot *ring;
static _Atomic uint64_t head; /* next position to claim */
static _Atomic uint64_t tail; /* next position to drain (flush token holder) */
static _Atomic uint64_t lost;

static void ring_reset(void)
{
    for (uint64_t i = 0; i < HSR_TIMELINE_RING; i++)
        atomic_store_explicit(&ring[i].seq, i, memory_order_relaxed);
    atomic_store(&head, 0);
    atomic_store(&tail, 0);
    atomic_store(&lost, 0);
}

static int ring_push(const struct hsr_sample *s)
{
    uint64_t pos = atomic_load_explicit(&head, memory_order_relaxed);
    for (;;) {
        struct slot *sl = &ring[pos & (HSR_TIMELINE_RING - 1)];
        uint64_t seq = atomic_load_explicit(&sl->seq, memory_order_acquire);
        int64_t diff = (int64_t)(seq - pos);
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&head, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                sl->s = *s;
                atomic_store_explicit(&sl->seq, pos + 1, memory_order_release);
                return 0;
            }
        } else if (diff < 0) {
            return -1; /* full */
        } else {
            pos = atomic_load_explicit(&head, memory_order_relaxed);
        }
    }
}

/* The next written sample, or 0 (empty, or the next one is still being written). */
static int ring_pop(struct hsr_sample *out)
{
    uint64_t pos = atomic_load_explicit(&tail, memory_order_relaxed);
    struct slot *sl = &ring[pos & (HSR_TIMELINE_RING - 1)];
    if (atomic_load_explicit(&sl->seq, memory_order_acquire) != pos + 1)
        return 0;
    *out = sl->s;
    atomic_store_explicit(&sl->seq, pos + HSR_TIMELINE_RING, memory_order_release);
    atomic_store_explicit(&tail, pos + 1, memory_order_relaxed);
    return 1;
}

static uint64_t ring_fill(void)
{
    return atomic_load_explicit(&head, memory_order_relaxed) -
           atomic_load_explicit(&tail, memory_order_relaxed);
}

/* ---- flushing ---- */

static _Atomic int token;                        /* thread id of the flushing thread, 0 = free */
static uint32_t regions_written;                 /* TIMELINE_REGIONS written so far (token) */
static struct hsr_buf rows, owns, out;           /* reused between flushes (token) */
static const char *labels[HSR_TIMELINE_LABELS];  /* this flush's labels (token) */
static uint32_t label_slot[HSR_TIMELINE_LABELS]; /* hash of pointer -> index + 1 */
static uint32_t nlabels;

static int take_token(int wait)
{
    int me = (int)syscall(SYS_gettid);
    if (atomic_load(&token) == me)
        return -1;
    for (int waited = 0;; waited++) {
        int free_ = 0;
        if (atomic_compare_exchange_strong(&token, &free_, me))
            return 0;
        if (!wait || waited > HSR_TIMELINE_TOKEN_WAIT_MS)
            return -1;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

static uint32_t label_index(const char *label)
{
    if (!label)
        return HS_NO_LABEL;
    uint32_t h = (uint32_t)(((uintptr_t)label >> 3) * 2654435761u) % HSR_TIMELINE_LABELS;
    for (uint32_t i = 0; i < HSR_TIMELINE_LABELS; i++, h = (h + 1) % HSR_TIMELINE_LABELS) {
        uint32_t idx = label_slot[h];
        if (idx && labels[idx - 1] == label)
            return idx - 1;
        if (!idx) {
            if (nlabels == HSR_TIMELINE_LABELS - 1)
                return HS_NO_LABEL;
            labels[nlabels] = label;
            label_slot[h] = ++nlabels;
            return nlabels - 1;
        }
    }
    return HS_NO_LABEL;
}

/* Maxima of the samples written (peaks) and of this flush's batch (committed to
 * peaks once the batch is in the file). Under the flush token. */
#define NO_PEAKS ((struct hsr_timeline_peaks){0, -1, -1, -1, -1, -1, -1})
static struct hsr_timeline_peaks peaks = NO_PEAKS, batch;

static void peak_of(int64_t *at, int64_t v)
{
    if (v > *at)
        *at = v;
}

static void peaks_merge(struct hsr_timeline_peaks *into, const struct hsr_timeline_peaks *b)
{
    if (b->n == 0)
        return;
    /* the job report's max(heap - heap_component) is over every sample, measured or
     * not: the first sample sets it, as numpy's max over the column would */
    if (into->n == 0)
        into->heap_app = b->heap_app;
    into->n += b->n;
    peak_of(&into->heap, b->heap);
    peak_of(&into->heap_component, b->heap_component);
    peak_of(&into->heap_app, b->heap_app);
    peak_of(&into->rss, b->rss);
    peak_of(&into->pss, b->pss);
    peak_of(&into->own, b->own);
}

/* The program's share of a process figure: net of the recorder's own memory when it
 * was measured (its pages are private: the same bytes of RSS and of PSS). */
static int64_t net(int64_t v, int64_t own) { return v >= 0 && own >= 0 ? v - own : v; }

void hsr_timeline_peaks(struct hsr_timeline_peaks *o)
{
    if (take_token(1) != 0) {
        *o = peaks; /* (a racy copy rather than none) */
        return;
    }
    *o = peaks;
    atomic_store(&token, 0);
}

static void encode_sample(const struct hsr_sample *s)
{
    struct hsr_timeline_peaks one = {1,
                                     s->heap,
                                     s->heap_component,
                                     s->heap - s->heap_component,
                                     net(s->rss, s->own),
                                     net(s->pss, s->own),
                                     s->own};
    peaks_merge(&batch, &one);
    hsr_buf_u64(&owns, (uint64_t)s->own);
    hsr_buf_u64(&rows, s->mono_ns);
    hsr_buf_u32(&rows, s->kind);
    hsr_buf_u32(&rows, s->region);
    hsr_buf_u32(&rows, label_index(s->label));
    hsr_buf_u32(&rows, 0);
    hsr_buf_u64(&rows, (uint64_t)s->heap);
    hsr_buf_u64(&rows, (uint64_t)s->heap_component);
    hsr_buf_u64(&rows, (uint64_t)s->rss);
    hsr_buf_u64(&rows, (uint64_t)s->pss);
}

static void encode_regions(void)
{
    uint32_t n = hsr_region_count();
    if (n <= regions_written)
        return;
    size_t c = hsr_chunk_begin(&out, HS_TIMELINE_REGIONS);
    hsr_buf_u32(&out, n - regions_written);
    for (uint32_t id = regions_written; id < n; id++) {
        const struct hsr_region *r = hsr_region_get(id);
        hsr_buf_u32(&out, id);
        hsr_buf_u32(&out, r->parent);
        hsr_buf_str(&out, r->name, strlen(r->name));
    }
    hsr_chunk_end(&out, c);
}

/* Drains the ring into the file. wait: wait for another thread's flush to end. */
static void flush(int wait)
{
    if (!ring || !hsr_profile_is_open() || !hsr_profile_writable_here())
        return; /* (the samples stay in the ring for the program's next write) */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* no dump handler on top of this */
    if (take_token(wait) != 0) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return;
    }
    rows.len = owns.len = out.len = 0;
    rows.failed = owns.failed = out.failed = 0;
    memset(label_slot, 0, sizeof label_slot);
    nlabels = 0;
    batch = NO_PEAKS;
    uint32_t count = 0;
    struct hsr_sample s;
    while (count < HSR_TIMELINE_RING && ring_pop(&s)) {
        encode_sample(&s);
        count++;
    }
    uint32_t regions_now = hsr_region_count();
    if (count || regions_now > regions_written) {
        encode_regions();
        struct hsr_caliper_totals t;
        hsr_calipers_totals(&t);
        size_t c = hsr_chunk_begin(&out, HS_TIMELINE_SAMPLES);
        hsr_buf_u64(&out, interval_ns);
        hsr_buf_u64(&out, (uint64_t)hsr_caliper_ns);
        hsr_buf_u32(&out, !hsr_heap_watch ? HS_HEAP_MEASURE_NONE
                                          : (uint32_t)hsr_heap_measure_requested());
        hsr_buf_u32(&out, 0);
        hsr_buf_u64(&out, t.taken);
        hsr_buf_u64(&out, t.skipped);
        hsr_buf_u64(&out, (uint64_t)t.rss_delta);
        hsr_buf_u64(&out, (uint64_t)t.pss_delta);
        hsr_buf_u64(&out, atomic_load(&lost));
        hsr_buf_u32(&out, nlabels);
        for (uint32_t i = 0; i < nlabels; i++)
            hsr_buf_str(&out, labels[i], strlen(labels[i]));
        hsr_buf_u32(&out, count);
        hsr_buf_u32(&out, 0);
        hsr_buf_bytes(&out, rows.p, rows.len);
        hsr_chunk_end(&out, c);
        /* the recorder's own memory at each of these samples, in the same write: a
         * reader pairs it with the TIMELINE chunk before it */
        c = hsr_chunk_begin(&out, HS_TIMELINE_RECORDER);
        hsr_buf_u32(&out, count);
        hsr_buf_u32(&out, 0);
        hsr_buf_bytes(&out, owns.p, owns.len);
        hsr_chunk_end(&out, c);
        if (hsr_heap_watch) { /* the exact peaks so far (heap.c) */
            struct hsr_heap_peaks pk;
            hsr_heap_peaks(&pk);
            c = hsr_chunk_begin(&out, HS_TIMELINE_HEAP_PEAK);
            hsr_buf_u32(&out, (uint32_t)hsr_heap_measure_requested());
            hsr_buf_u32(&out, 0);
            hsr_buf_u64(&out, (uint64_t)pk.total);
            hsr_buf_u64(&out, (uint64_t)pk.component);
            hsr_buf_u64(&out, (uint64_t)pk.app);
            hsr_chunk_end(&out, c);
        }
        if (rows.failed || owns.failed || hsr_profile_write(&out) != 0)
            atomic_fetch_add(&lost, count);
        else {
            regions_written = regions_now;
            peaks_merge(&peaks, &batch);
        }
    }
    atomic_store(&token, 0);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- samples ---- */

void hsr_timeline_measure(struct hsr_sample *s, int how)
{
    s->mono_ns = hsr_now_ns(CLOCK_MONOTONIC) - hsr_start_mono_ns;
    if (hsr_heap_watch)
        hsr_heap_in_use(&s->heap, &s->heap_component);
    else
        s->heap = s->heap_component = -1;
    s->own = hsr_own_resident(how & HSR_MEASURE_FRESH);
    if (how & HSR_MEASURE_PSS) {
        hsr_read_memory(&s->rss, &s->pss);
    } else {
        hsr_read_rss(&s->rss);
        s->pss = -1;
    }
}

void hsr_timeline_add(const struct hsr_sample *s)
{
    if (!ring)
        return;
    if (ring_push(s) != 0) {
        flush(1); /* full: wait for the flush in progress, or make one */
        if (ring_push(s) != 0) {
            atomic_fetch_add(&lost, 1);
            return;
        }
    }
    if (ring_fill() >= HSR_TIMELINE_RING / 4 * 3)
        flush(0);
}

void hsr_timeline_region(unsigned kind, uint32_t region)
{
    if (!hsr_timeline_on || !ring)
        return;
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    struct hsr_sample s = {0};
    hsr_timeline_measure(&s, 0);
    s.kind = kind;
    s.region = region;
    hsr_timeline_add(&s);
    hsr_guard = saved_guard;
}

void hsr_timeline_snapshot(int from_signal)
{
    (void)from_signal;
    if (!hsr_timeline_on || !ring)
        return;
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    struct hsr_sample s = {0};
    hsr_timeline_measure(&s, HSR_MEASURE_PSS);
    s.kind = HS_SAMPLE_FINAL;
    s.region = atomic_load_explicit(&hsr_process_region, memory_order_relaxed);
    hsr_timeline_add(&s);
    flush(1);
    hsr_guard = saved_guard;
}

/* ---- the sampler thread ---- */

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static void *sampler(void *arg)
{
    (void)arg;
    hsr_guard = 1;
    hsr_profile_background();
    hsr_own_thread_mark();
    hsr_helper_thread_start();
    atomic_store(&hsr_sampler_running, 1);
    uint64_t start = hsr_now_ns(CLOCK_MONOTONIC), never = UINT64_MAX;
    uint64_t next = hsr_timeline_on ? start : never;
    uint64_t next_flush = hsr_timeline_on ? start + flush_ns : never;
    uint64_t next_arm = start, next_refine = start + 1000000000u;
    uint64_t next_snapshot = hsr_snapshot_period_ns ? start + hsr_snapshot_period_ns : never;
    for (;;) {
        uint64_t now = hsr_now_ns(CLOCK_MONOTONIC);
        /* MPI calipers: one call may be measured per period (calipers.c) */
        int arming =
            atomic_load_explicit(&hsr_calipers_active, memory_order_relaxed) && hsr_caliper_ns > 0;
        if (arming && now >= next_arm) {
            hsr_calipers_set_armed(1);
            next_arm = now + hsr_caliper_period();
        }
        if (now >= next_refine) { /* the TSC clock of tracking and trace mode */
            hsr_fast_clock_refine();
            next_refine = now + 1000000000u;
        }
        if (now >= next) {
            struct hsr_sample s = {0};
            uint64_t cpu = hsr_now_ns(CLOCK_THREAD_CPUTIME_ID);
            hsr_timeline_measure(&s, HSR_MEASURE_PSS | HSR_MEASURE_FRESH);
            /* smaps_rollup costs CPU in proportion to the RSS (about 10 ms at 1.5 GB):
             * the period stretches so that the reads take at most 1/HSR_CALIPER_COST_SHARE
             * of a CPU, as the calipers' do (this thread's CPU: preemption is no cost) */
            uint64_t period = (hsr_now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu) * HSR_CALIPER_COST_SHARE;
            if (period < interval_ns)
                period = interval_ns;
            s.kind = HS_SAMPLE_PERIODIC;
            s.region = atomic_load_explicit(&hsr_process_region, memory_order_relaxed);
            /* sealed: the process is ending, and its exit sample, measured after the
             * seal, is the last; a sample measured before the seal sorts before it (a
             * push after it came after "final" in the timeline once, under load) */
            if (!hsr_profile_sealed() && ring_push(&s) != 0)
                atomic_fetch_add(&lost, 1);
            next += period;
            if (next <= now) /* late (a stopped process, a busy machine): no catching up */
                next = now + period;
        }
        if ((now >= next_flush || (ring && ring_fill() >= HSR_TIMELINE_RING / 2)) &&
            !hsr_profile_sealed()) {
            flush(0);
            next_flush = now + flush_ns;
        }
        if (now >= next_snapshot) {
            if (!hsr_profile_sealed()) /* (an ending process writes its own last one) */
                hsr_snapshot(HS_REASON_PERIODIC, 0);
            next_snapshot = hsr_now_ns(CLOCK_MONOTONIC) + hsr_snapshot_period_ns;
        }
        hsr_helper_poll();
        uint64_t wake = min_u64(min_u64(next, next_flush), next_snapshot);
        if (arming && next_arm < wake)
            wake = next_arm;
        uint64_t most = hsr_main_thread_gone() ? (uint64_t)HSR_LAST_THREAD_POLL_MS
                                               : (uint64_t)HSR_HELPER_SLEEP_MAX_MS;
        wake = min_u64(wake, now + most * 1000000u);
        struct timespec ts = {(time_t)(wake / 1000000000u), (long)(wake % 1000000000u)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
    return NULL;
}

/* The sampler's stack: the recorder's memory (hsr_map), measured with it; the same in
 * a fork child (whose sampler is the only one that uses it there). */
static void *sampler_stack;
#define SAMPLER_STACK (256u * 1024u)

static void start_sampler(void)
{
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (!sampler_stack)
        sampler_stack = hsr_map(SAMPLER_STACK);
    if (!sampler_stack || pthread_attr_setstack(&attr, sampler_stack, SAMPLER_STACK) != 0)
        pthread_attr_setstacksize(&attr, SAMPLER_STACK);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* the thread starts with every signal blocked */
    int saved_guard = hsr_guard;
    hsr_guard = 1; /* the thread's TLS block (glibc: calloc) is not the program's */
    int alone = hsr_single_threaded();
    pthread_t t;
    if (pthread_create(&t, &attr, sampler, NULL) != 0)
        hsr_warn("cannot start the timeline sampler thread: boundary samples only");
    else
        pthread_setname_np(t, "heapscope-tl");
    if (alone)
        hsr_single_threaded_again();
    hsr_guard = saved_guard;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

void hsr_timeline_start(void)
{
    if (hsr_timeline_on) {
        hsr_own_start();
        ring = hsr_map(HSR_TIMELINE_RING * sizeof *ring);
        if (ring) {
            ring_reset();
        } else {
            hsr_warn("no memory for the timeline: timeline off");
            hsr_timeline_on = 0;
        }
    }
    if (hsr_timeline_on || hsr_snapshot_period_ns)
        start_sampler();
}

/* The child starts its own file: the parent's pending samples are the parent's. */
void hsr_timeline_after_fork_child(void)
{
    atomic_store(&hsr_sampler_running, 0);
    hsr_heap_peaks_restart();
    if (hsr_timeline_on && ring) {
        ring_reset();
        atomic_store(&token, 0);
        regions_written = 0;
        peaks = NO_PEAKS;
        hsr_timeline_calipers_reset();
    }
    if (hsr_timeline_on || hsr_snapshot_period_ns)
        start_sampler();
}
