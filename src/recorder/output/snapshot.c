/*
 * snapshot.c — one dump: merge every thread's tables and append a snapshot.
 *
 * A snapshot (chunk layout in profile_format.h) is built in scratch memory (an
 * arena) and written with one write(2), so a process killed mid-dump leaves the
 * previous snapshot complete. Counts are cumulative; heapscope_reset() stores a
 * merged copy as the baseline, subtracted here: the owner threads never see their
 * counters zeroed under them, so reset needs no lock on the hot path.
 *
 * Dumps are serialized by an owner word rather than a mutex: a signal handler
 * that interrupts its own thread's dump gives up instead of deadlocking, and one
 * that meets another thread's dump waits at most a few seconds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "access/access.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "count/counting.h"
#include "count/failed.h"
#include "count/regions.h"
#include "count/thread.h"
#include "output/profile_writer.h"
#include "output/snapshot.h"
#include "stacks/modules.h"
#include "stacks/stacks.h"
#include "timeline/timeline.h"
#include "trace/trace.h"
#include "track/track.h"

/* ---- merged rows: (region, key, frames) -> count, in an arena ---- */

struct row {
    uint64_t hash; /* 0 = empty */
    uint64_t key;  /* size, or api id */
    uint32_t region, depth;
    const uint64_t *frames; /* stack types only */
    uint64_t count;
};

struct rows {
    struct row *e;
    uint64_t mask, used;
    struct hsr_arena *arena;
    int failed;
};

static uint64_t row_hash(uint32_t region, uint64_t key, uint32_t depth, const uint64_t *f)
{
    uint64_t h = (key * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)region << 32 | depth);
    for (uint32_t i = 0; i < depth; i++)
        h = (h ^ f[i]) * 0x100000001b3ull;
    h ^= h >> 29;
    return h ? h : 1;
}

static struct row *row_find(struct rows *t, uint64_t h, uint32_t region, uint64_t key,
                            uint32_t depth, const uint64_t *f)
{
    for (uint64_t i = h;; i++) {
        struct row *r = &t->e[i & t->mask];
        if (r->hash == 0 ||
            (r->hash == h && r->key == key && r->region == region && r->depth == depth &&
             (depth == 0 || memcmp(r->frames, f, depth * sizeof *f) == 0)))
            return r;
    }
}

static int rows_grow(struct rows *t)
{
    uint64_t slots = t->e ? (t->mask + 1) * 2 : 1024;
    struct row *e = hsr_arena_alloc(t->arena, slots * sizeof *e);
    if (!e)
        return -1;
    struct rows bigger = {e, slots - 1, 0, t->arena, 0};
    for (uint64_t i = 0; t->e && i <= t->mask; i++)
        if (t->e[i].hash) {
            struct row *r = row_find(&bigger, t->e[i].hash, t->e[i].region, t->e[i].key,
                                     t->e[i].depth, t->e[i].frames);
            *r = t->e[i];
            bigger.used++;
        }
    *t = bigger;
    return 0;
}

static void rows_add(struct rows *t, uint32_t region, uint64_t key, uint32_t depth,
                     const uint64_t *f, uint64_t count)
{
    if (t->failed)
        return;
    if ((!t->e || (t->used + 1) * 2 > t->mask + 1) && rows_grow(t)) {
        t->failed = 1;
        return;
    }
    uint64_t h = row_hash(region, key, depth, f);
    struct row *r = row_find(t, h, region, key, depth, f);
    if (!r->hash) {
        r->hash = h;
        r->key = key;
        r->region = region;
        r->depth = depth;
        r->frames = f;
        t->used++;
    }
    r->count += count;
}

static uint64_t rows_get(const struct rows *t, uint32_t region, uint64_t key, uint32_t depth,
                         const uint64_t *f)
{
    if (!t->e)
        return 0;
    struct row *r =
        row_find((struct rows *)t, row_hash(region, key, depth, f), region, key, depth, f);
    return r->hash ? r->count : 0;
}

struct merged {
    struct rows sizes, apis, stacks;
    struct rows failed; /* key size; region: region | api << 16 | size unknown << 31 */
    uint64_t lost;
};
_Static_assert(HSR_MAX_REGIONS <= 1u << 16 && HS_API_COUNT <= 1u << 15, "failed rows' key");

static void add_size(void *ctx, uint32_t region, uint64_t size, uint64_t count)
{
    rows_add(&((struct merged *)ctx)->sizes, region, size, 0, NULL, count);
}

static void add_api(void *ctx, uint32_t region, unsigned api, uint64_t calls)
{
    rows_add(&((struct merged *)ctx)->apis, region, api, 0, NULL, calls);
}

static void add_stack(void *ctx, uint32_t region, uint64_t size, uint32_t depth,
                      const uint64_t *frames, uint64_t count)
{
    rows_add(&((struct merged *)ctx)->stacks, region, size, depth, frames, count);
}

static void add_failed(void *ctx, uint32_t region, unsigned api, uint64_t size, int size_known,
                       uint64_t calls)
{
    uint32_t key = region | (uint32_t)api << 16 | (size_known ? 0 : 1u << 31);
    rows_add(&((struct merged *)ctx)->failed, key, size, 0, NULL, calls);
}

static void merge_all(struct merged *m, struct hsr_arena *arena)
{
    memset(m, 0, sizeof *m);
    m->sizes.arena = m->apis.arena = m->stacks.arena = m->failed.arena = arena;
    hsr_failed_visit(m, add_failed);
    for (struct hsr_thread *t = hsr_threads_first(); t; t = hsr_threads_next(t)) {
        hsr_thread_visit(t, m, add_size, add_api);
        struct hsr_stack_table *st = hsr_thread_stacks(t);
        if (st)
            hsr_stack_table_visit(st, m, add_stack);
    }
    m->lost = hsr_stacks_lost();
}

/* ---- baseline (heapscope_reset) ---- */

static struct hsr_arena baseline_arena;
static struct merged baseline;
static uint32_t seq;

/* ---- dump serialization ---- */

static _Atomic int dump_owner;

static int lock_dump(int from_signal)
{
    int me = (int)syscall(SYS_gettid);
    if (atomic_load(&dump_owner) == me)
        return -1; /* a signal interrupted this thread's own dump */
    for (int waited_ms = 0;; waited_ms++) {
        int free_ = 0;
        if (atomic_compare_exchange_strong(&dump_owner, &free_, me))
            return 0;
        if (from_signal && waited_ms > 5000)
            return -1;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

static void unlock_dump(void) { atomic_store(&dump_owner, 0); }

void hsr_dump_lock_for_fork(void) { lock_dump(0); }
void hsr_dump_unlock_for_fork(void) { unlock_dump(); }

/* ---- capture (job summary) ---- */

static hsr_snapshot_visit capture;
static void *capture_ctx;

void hsr_snapshot_capture(hsr_snapshot_visit visit, void *ctx)
{
    capture = visit;
    capture_ctx = ctx;
}

static void capture_rows(int api, const struct rows *now, const struct rows *base)
{
    for (uint64_t i = 0; now->e && i <= now->mask; i++) {
        const struct row *r = &now->e[i];
        uint64_t v = r->hash ? r->count - rows_get(base, r->region, r->key, 0, NULL) : 0;
        if (v)
            capture(capture_ctx, api, r->region, r->key, v);
    }
}

/* ---- writing ---- */

static void write_regions(struct hsr_buf *b)
{
    uint32_t n = hsr_region_count();
    size_t c = hsr_chunk_begin(b, HS_CHUNK_REGIONS);
    hsr_buf_u32(b, n);
    for (uint32_t id = 0; id < n; id++) {
        const struct hsr_region *r = hsr_region_get(id);
        hsr_buf_u32(b, id);
        hsr_buf_u32(b, r->parent);
        hsr_buf_str(b, r->name, strlen(r->name));
    }
    hsr_chunk_end(b, c);
}

/* SIZE_COUNTS or API_COUNTS: rows minus the baseline, zero rows left out. */
static void write_counts(struct hsr_buf *b, uint32_t type, const struct rows *now,
                         const struct rows *base)
{
    size_t c = hsr_chunk_begin(b, type);
    size_t count_at = hsr_count_slot(b);
    uint32_t n = 0;
    for (uint64_t i = 0; now->e && i <= now->mask; i++) {
        const struct row *r = &now->e[i];
        uint64_t v = r->hash ? r->count - rows_get(base, r->region, r->key, 0, NULL) : 0;
        if (!v)
            continue;
        hsr_buf_u32(b, r->region);
        if (type == HS_CHUNK_SIZE_COUNTS) {
            hsr_buf_u32(b, 0);
            hsr_buf_u64(b, r->key);
        } else {
            hsr_buf_u32(b, (uint32_t)r->key);
        }
        hsr_buf_u64(b, v);
        n++;
    }
    hsr_count_fill(b, count_at, n);
    hsr_chunk_end(b, c);
}

/* FAILED_ALLOCS, when any call failed (minus the baseline). */
static void write_failed(struct hsr_buf *b, const struct rows *now, const struct rows *base)
{
    struct hsr_rows rows = {.type = HS_FAILED_ALLOCS, .per_chunk = HSR_STACK_TYPES_PER_CHUNK};
    for (uint64_t i = 0; now->e && i <= now->mask; i++) {
        const struct row *r = &now->e[i];
        uint64_t v = r->hash ? r->count - rows_get(base, r->region, r->key, 0, NULL) : 0;
        if (!v)
            continue;
        hsr_rows_next(b, &rows);
        hsr_buf_u32(b, r->region & 0xFFFF);
        hsr_buf_u32(b, (r->region >> 16) & 0x7FFF);
        hsr_buf_u64(b, r->key);
        hsr_buf_u64(b, v);
        hsr_buf_u32(b, !(r->region >> 31));
        hsr_buf_u32(b, 0);
    }
    hsr_rows_done(b, &rows);
}

static void write_stacks(struct hsr_buf *b, const struct rows *now, const struct rows *base)
{
    struct hsr_rows rows = {.type = HS_CHUNK_STACK_TYPES, .per_chunk = HSR_STACK_TYPES_PER_CHUNK};
    for (uint64_t i = 0; now->e && i <= now->mask; i++) {
        const struct row *r = &now->e[i];
        uint64_t v =
            r->hash ? r->count - rows_get(base, r->region, r->key, r->depth, r->frames) : 0;
        if (!v)
            continue;
        hsr_rows_next(b, &rows);
        hsr_buf_u32(b, r->region);
        hsr_buf_u32(b, r->depth);
        hsr_buf_u64(b, r->key);
        hsr_buf_u64(b, v);
        hsr_buf_u64(b, v * r->key);
        hsr_buf_bytes(b, r->frames, r->depth * sizeof(uint64_t));
    }
    hsr_rows_done(b, &rows);
}

int hsr_snapshot(unsigned reason, int from_signal)
{
    if (!hsr_profile_is_open())
        return -1;
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    hsr_track_settle(from_signal);      /* deferred frees counted (track/deferred.c) */
    hsr_timeline_snapshot(from_signal); /* its "final" sample, and a flush */
    if (lock_dump(from_signal)) {
        hsr_guard = saved_guard;
        return -1;
    }
    hsr_trace_flush(reason == HS_REASON_EXIT || reason == HS_REASON_EXEC ||
                        reason == HS_REASON_SIGTERM || reason == HS_REASON_SIGINT ||
                        reason == HS_REASON_SIGNAL,
                    from_signal);
    struct hsr_arena arena = {0};
    struct merged now;
    merge_all(&now, &arena);
    struct hsr_buf b = {0};

    size_t c = hsr_chunk_begin(&b, HS_CHUNK_SNAPSHOT_BEGIN);
    hsr_buf_u32(&b, seq);
    hsr_buf_u32(&b, reason);
    hsr_buf_u64(&b, hsr_now_ns(CLOCK_MONOTONIC) - hsr_start_mono_ns);
    hsr_chunk_end(&b, c);

    c = hsr_chunk_begin(&b, HS_CHUNK_MODULES);
    hsr_modules_write(&b);
    hsr_chunk_end(&b, c);

    write_regions(&b);
    write_counts(&b, HS_CHUNK_SIZE_COUNTS, &now.sizes, &baseline.sizes);
    write_counts(&b, HS_CHUNK_API_COUNTS, &now.apis, &baseline.apis);
    write_failed(&b, &now.failed, &baseline.failed);
    write_stacks(&b, &now.stacks, &baseline.stacks);
    hsr_tracking_write(&b);
    hsr_access_write(&b, from_signal); /* record --access (access/write.c) */
    hsr_ending_write(&b, reason);      /* a crash's or MPI_Abort's ENDING chunk (core/ending.c) */
    hsr_process_end_write(&b, reason); /* a final snapshot's PROCESS_END (core/ending.c) */

    int incomplete = now.sizes.failed || now.apis.failed || now.stacks.failed || now.failed.failed;
    c = hsr_chunk_begin(&b, HS_CHUNK_SNAPSHOT_END);
    hsr_buf_u32(&b, seq);
    hsr_buf_u32(&b, 0); /* types_crc: the writer's, as it appends (hsr_profile_write_snapshot) */
    hsr_buf_u64(&b, now.lost - baseline.lost);
    hsr_buf_u64(&b, hsr_threads_seen());
    hsr_chunk_end(&b, c);

    /* Out of memory while merging: better no snapshot than a wrong one. */
    if (incomplete)
        hsr_profile_lost(ENOMEM, "a snapshot (out of memory merging the counts)");
    int rc = incomplete ? -1 : hsr_profile_write_snapshot(&b);
    if (rc == 0)
        seq++;
    if (rc == 0 && hsr_reason_final(reason))
        hsr_teardown_leave(); /* a sibling rank waiting for it may end (core/teardown.c) */
    if (rc == 0 && capture) {
        capture_rows(0, &now.sizes, &baseline.sizes);
        capture_rows(1, &now.apis, &baseline.apis);
    }
    hsr_buf_release(&b);
    hsr_arena_free(&arena);
    unlock_dump();
    hsr_guard = saved_guard;
    return rc;
}

/* The baseline's stack rows point into the threads' tables: their frames are
 * never moved nor freed, except in a fork child, which drops the baseline too. */
void hsr_snapshot_reset_baseline(void)
{
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    lock_dump(0);
    struct hsr_arena arena = {0};
    struct merged m;
    merge_all(&m, &arena);
    hsr_arena_free(&baseline_arena);
    baseline_arena = arena;
    baseline = m;
    unlock_dump();
    hsr_guard = saved_guard;
}

void hsr_snapshot_after_fork_child(void)
{
    hsr_arena_free(&baseline_arena);
    memset(&baseline, 0, sizeof baseline);
    seq = 0;
    atomic_store(&dump_owner, 0);
}
