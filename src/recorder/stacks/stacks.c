/*
 * stacks.c — call stacks of the selected allocations, aggregated per thread into
 * stack trace types: distinct (region, size, frame sequence), with a count.
 *
 * Capture: DWARF CFI by default, through a per-thread cache of the last unwind of
 * each call site checked against the stack, and rules read from the CFI
 * (unwind_cache.c), else libunwind's unw_backtrace; with HEAPSCOPE_UNWIND=fp a walk
 * of the frame-pointer chain, bounds-checked against the thread's stack so code
 * without frame pointers ends the walk instead of crashing it. Such code ends it
 * after a frame or two: the first FP_PROBES stacks are unwound both ways (the
 * DWARF frames are kept), and if most frame-pointer walks stopped short, DWARF
 * unwinds from then on, said in one line and in the profile's settings. Leading
 * frames inside libheapscope.so are dropped: frame 0 is the return address into
 * the code that called the allocation function.
 *
 * Storage, per thread: a dense array of types in order of first sight, and an
 * array of their frames, both reserved with mmap at a fixed size (pages are
 * touched only when used) and append-only, so a dump reads them while the owner
 * inserts (a type is published by advancing `used`, release). The owner finds
 * types through an index (open addressing, grown by rehashing) that nobody else
 * reads; it stays small and cache-hot, and the frequent types sit together at
 * the front of the array. When the array or the frames are full, the allocation
 * is counted in lost_stacks: nothing is dropped silently.
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/lifecycle.h"
#include "core/pool.h"
#include "count/thread.h"
#include "output/profile_writer.h"
#include "stacks/modules.h"
#include "stacks/stacks.h"
#include "stacks/unwind_cache.h"

struct hsr_stack_entry {
    uint64_t hash;
    uint64_t size;
    uint32_t region, depth;
    uint64_t frames_at;     /* index into frames[] */
    const uint64_t *frames; /* = table frames + frames_at (never moves) */
    _Atomic uint64_t count;
    void *_Atomic track; /* tracking's record of this type (track/records.h), or NULL */
    uint32_t trace_id;   /* the trace's id of this type (trace/events.c), 0 = none yet */
};

struct index_slot {
    uint32_t entry; /* entry number + 1; 0 = empty */
    uint32_t tag;   /* high half of the hash */
};

struct hsr_stack_table {
    _Atomic uint64_t used; /* e[0 .. used) are complete */
    uint64_t frames_used;
    uint64_t *frames;
    struct index_slot *index; /* owner only */
    uint64_t index_mask;
    struct hsr_unwind_cache *unwind; /* owner only; NULL: none (yet, or could not be made) */
    int unwind_tried;                /* made or tried: not again */
    struct hsr_stack_entry e[HSR_STACK_TYPES];
};

static _Atomic int use_fp; /* cleared when the frame-pointer walks stop short (probe) */
#define FP_PROBES 32u
static _Atomic uint32_t fp_probes, fp_short; /* the first stacks of --unwind fp, both ways */
static int use_cache = 1;    /* HEAPSCOPE_UNWIND_CACHE=0: libunwind for every stack (to compare) */
static int report_unwinding; /* HEAPSCOPE_UNWIND_STATS=1: what the cache did, at exit */
static unsigned max_depth = 64;
static _Atomic uint64_t lost;
static HSR_TLS uintptr_t stack_lo, stack_hi; /* this thread's stack, for the fp walk */

void hsr_stacks_init(int unwinder, unsigned depth)
{
    atomic_store(&use_fp, unwinder == HS_UNWINDER_FRAME_POINTERS);
    const char *cache = getenv("HEAPSCOPE_UNWIND_CACHE");
    use_cache = !(cache && strcmp(cache, "0") == 0);
    const char *stats = getenv("HEAPSCOPE_UNWIND_STATS");
    report_unwinding = stats && strcmp(stats, "1") == 0;
    max_depth = depth < 1 ? 1 : depth > HSR_MAX_DEPTH ? HSR_MAX_DEPTH : depth;
    if (!use_fp)
        unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

uint64_t hsr_stacks_lost(void) { return atomic_load_explicit(&lost, memory_order_relaxed); }

static void find_stack_bounds(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) { /* guard is held */
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            stack_lo = (uintptr_t)addr;
            stack_hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
    if (!stack_hi) { /* unknown: allow 1 MiB above here */
        stack_lo = (uintptr_t)__builtin_frame_address(0);
        stack_hi = stack_lo + (1u << 20);
    }
}

static __attribute__((noinline)) int walk_frame_pointers(uint64_t *out, int max)
{
    if (!stack_hi)
        find_stack_bounds();
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    uintptr_t lo = fp;
    int n = 0;
    while (n < max && fp >= lo && fp < stack_hi - 16 && (fp & 7) == 0) {
        uintptr_t next = ((uintptr_t *)fp)[0];
        uintptr_t ret = ((uintptr_t *)fp)[1];
        if (ret < 4096)
            break;
        out[n++] = ret;
        if (next <= fp)
            break;
        fp = next;
    }
    return n;
}

/* Return addresses of the caller's stack, recorder frames removed (libunwind's
 * unw_backtrace or the frame-pointer walk). */
static int capture(uint64_t *out, int fp)
{
    uint64_t raw[HSR_MAX_DEPTH + HSR_STACK_SKIP_MAX];
    int want = (int)max_depth + HSR_STACK_SKIP_MAX;
    int n = fp ? walk_frame_pointers(raw, want) : unw_backtrace((void **)raw, want);
    int skip = 0;
    while (skip < n && hsr_in_recorder((uintptr_t)raw[skip]))
        skip++;
    n -= skip;
    if (n > (int)max_depth)
        n = (int)max_depth;
    if (n < 0)
        n = 0;
    memcpy(out, raw + skip, (size_t)n * sizeof *out);
    return n;
}

/* One of the first stacks of --unwind fp, unwound both ways. A walk that stopped
 * after 1 or 2 frames where DWARF found 3 more or over was cut short: its DWARF
 * frames are kept; else the frame pointers', as asked. After FP_PROBES, if three in
 * four were cut short, DWARF from then on (code built without frame pointers:
 * Debian's packages, most -O2 builds). */
static int probe(uint64_t *out)
{
    uint64_t dwarf[HSR_MAX_DEPTH];
    int nf = capture(out, 1), nd = capture(dwarf, 0);
    int cut = nf <= 2 && nd >= nf + 3;
    if (cut) {
        memcpy(out, dwarf, (size_t)nd * sizeof *out);
        atomic_fetch_add(&fp_short, 1);
    }
    if (atomic_fetch_add(&fp_probes, 1) + 1 == FP_PROBES &&
        atomic_load(&fp_short) * 4 >= FP_PROBES * 3) {
        atomic_store(&use_fp, 0);
        hsr_profile_unwinder(HS_UNWINDER_DWARF);
        char msg[300];
        snprintf(msg, sizeof msg,
                 "--unwind fp: %u of the first %u stacks ended after 1 or 2 frames where the "
                 "DWARF unwind found 3 more or over (code built without frame pointers): "
                 "unwinding with DWARF instead, as without --unwind fp",
                 (unsigned)atomic_load(&fp_short), FP_PROBES);
        hsr_warn(msg);
    }
    return cut ? nd : nf;
}

static uint64_t hash_stack(uint32_t region, uint64_t size, const uint64_t *f, int n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ size ^ ((uint64_t)region << 48);
    for (int i = 0; i < n; i++)
        h = (h ^ f[i]) * 0x100000001b3ull;
    h ^= h >> 31;
    return h ? h : 1;
}

static struct hsr_stack_table *table_of(struct hsr_thread *t)
{
    struct hsr_stack_table *st = hsr_thread_stacks(t);
    if (HSR_LIKELY(st))
        return st;
    st = hsr_map(sizeof *st);
    if (!st)
        return NULL;
    st->frames = hsr_map((size_t)HSR_STACK_FRAME_SLOTS * sizeof(uint64_t));
    if (!st->frames) {
        hsr_unmap(st, sizeof *st);
        return NULL;
    }
    atomic_store_explicit((struct hsr_stack_table * _Atomic *)hsr_thread_stacks_slot(t), st,
                          memory_order_release);
    return st;
}

/* Owner only: index of twice the slots, rebuilt from the entries. */
static int index_grow(struct hsr_stack_table *st)
{
    uint64_t slots = st->index ? (st->index_mask + 1) * 2 : 1024;
    struct index_slot *index = hsr_map(slots * sizeof *index);
    if (!index)
        return -1;
    uint64_t used = atomic_load_explicit(&st->used, memory_order_relaxed);
    for (uint64_t n = 0; n < used; n++)
        for (uint64_t i = st->e[n].hash;; i++) {
            struct index_slot *slot = &index[i & (slots - 1)];
            if (!slot->entry) {
                slot->entry = (uint32_t)n + 1;
                slot->tag = (uint32_t)(st->e[n].hash >> 32);
                break;
            }
        }
    hsr_unmap(st->index, (st->index_mask + 1) * sizeof *index);
    st->index = index;
    st->index_mask = slots - 1;
    return 0;
}

/* The type of (region, size, frames) in the thread's table, counted once more; made
 * if new. NULL when the table is full (counted in lost). */
static struct hsr_stack_entry *find_or_add(struct hsr_stack_table *st, uint32_t region,
                                           uint64_t size, const uint64_t *frames, int n)
{
    uint64_t used = st ? atomic_load_explicit(&st->used, memory_order_relaxed) : 0;
    if (!st || ((used + 1) * 2 > st->index_mask + 1 && index_grow(st))) {
        atomic_fetch_add(&lost, 1);
        return NULL;
    }
    uint64_t h = hash_stack(region, size, frames, n);
    uint32_t tag = (uint32_t)(h >> 32);
    for (uint64_t i = h;; i++) {
        struct index_slot *slot = &st->index[i & st->index_mask];
        if (!slot->entry) {
            if (used == HSR_STACK_TYPES || st->frames_used + (uint64_t)n > HSR_STACK_FRAME_SLOTS) {
                atomic_fetch_add(&lost, 1);
                return NULL;
            }
            struct hsr_stack_entry *e = &st->e[used];
            memcpy(st->frames + st->frames_used, frames, (size_t)n * sizeof *frames);
            e->hash = h;
            e->frames_at = st->frames_used;
            e->frames = st->frames + st->frames_used;
            e->size = size;
            e->region = region;
            e->depth = (uint32_t)n;
            atomic_store_explicit(&e->count, 1, memory_order_relaxed);
            st->frames_used += (uint64_t)n;
            slot->entry = (uint32_t)used + 1;
            slot->tag = tag;
            atomic_store_explicit(&st->used, used + 1, memory_order_release);
            return e;
        }
        if (slot->tag != tag)
            continue;
        struct hsr_stack_entry *e = &st->e[slot->entry - 1];
        if (e->hash == h && e->size == size && e->region == region && e->depth == (uint32_t)n &&
            memcmp(st->frames + e->frames_at, frames, (size_t)n * sizeof *frames) == 0) {
            hsr_bump(&e->count, 1);
            return e;
        }
    }
}

struct hsr_stack_entry *hsr_stack_record(struct hsr_thread *t, uint32_t region, uint64_t size)
{
    uint64_t frames[HSR_MAX_DEPTH];
    struct hsr_stack_table *st = table_of(t);
    struct hsr_stack_entry *known = NULL;
    void *site = NULL;
    int fp = atomic_load_explicit(&use_fp, memory_order_relaxed);
    if (HSR_UNLIKELY(st && !st->unwind_tried) && !fp && use_cache) {
        st->unwind = hsr_unwind_cache_new(); /* on the first stack by DWARF */
        st->unwind_tried = 1;
    }
    int n = -1;
    if (st && st->unwind && !fp)
        n = hsr_unwind_cached(st->unwind, __builtin_frame_address(0), frames, (int)max_depth,
                              region, size, &known, &site);
    if (n < 0)
        n = HSR_UNLIKELY(fp) && atomic_load_explicit(&fp_probes, memory_order_relaxed) < FP_PROBES
                ? probe(frames)
                : capture(frames, fp);
    if (known) { /* the call site's frames, unchanged, and the type they gave */
        hsr_bump(&known->count, 1);
        return known;
    }
    struct hsr_stack_entry *e = find_or_add(st, region, size, frames, n);
    if (e && site)
        hsr_unwind_cache_type(st->unwind, site, region, size, e);
    return e;
}

const uint64_t *hsr_stack_entry_frames(const struct hsr_stack_entry *e, uint32_t *depth)
{
    *depth = e->depth;
    return e->frames;
}

void *_Atomic *hsr_stack_entry_slot(struct hsr_stack_entry *e) { return &e->track; }

uint32_t *hsr_stack_entry_trace_id(struct hsr_stack_entry *e) { return &e->trace_id; }

void hsr_stack_table_visit(struct hsr_stack_table *st, void *ctx, hsr_stack_fn fn)
{
    uint64_t used = atomic_load_explicit(&st->used, memory_order_acquire);
    for (uint64_t i = 0; i < used; i++) {
        struct hsr_stack_entry *e = &st->e[i];
        uint64_t count = atomic_load_explicit(&e->count, memory_order_relaxed);
        if (count)
            fn(ctx, e->region, e->size, e->depth, st->frames + e->frames_at, count);
    }
}

/* Fork child: empty the table; the pages go back to zero-on-demand instead of
 * being written (a table is megabytes, mostly untouched). */
void hsr_stack_table_clear(struct hsr_stack_table *st)
{
    uint64_t *frames = st->frames;
    struct hsr_unwind_cache *unwind = st->unwind;
    hsr_unmap(st->index, (st->index_mask + 1) * sizeof *st->index);
    madvise(st, (sizeof *st + 4095) & ~(size_t)4095, MADV_DONTNEED);
    madvise(frames, (size_t)HSR_STACK_FRAME_SLOTS * sizeof(uint64_t), MADV_DONTNEED);
    st->frames = frames; /* the rest is zero again: empty, no index */
    st->unwind = unwind;
    st->unwind_tried = unwind != NULL;
    if (unwind)
        hsr_unwind_cache_clear(unwind); /* its types are gone */
}

void hsr_stacks_report(void)
{
    if (!report_unwinding || atomic_load(&use_fp) || !use_cache)
        return;
    struct hsr_unwind_stats s = {0};
    for (struct hsr_thread *t = hsr_threads_first(); t; t = hsr_threads_next(t)) {
        struct hsr_stack_table *st = hsr_thread_stacks(t);
        if (st && st->unwind)
            hsr_unwind_cache_stats(st->unwind, &s);
    }
    char msg[512];
    snprintf(msg, sizeof msg,
             "unwinding: %llu stacks: %llu from call sites seen before, %llu walked by CFI "
             "rules (%llu of them joining a stack met before), %llu by libunwind; %llu more "
             "by libunwind while the cache stood aside (%llu times); %llu rules read from the "
             "CFI, %llu without a fixed rule; the call-site table doubled %llu times",
             (unsigned long long)s.stacks, (unsigned long long)s.from_sites,
             (unsigned long long)s.walked, (unsigned long long)s.joined,
             (unsigned long long)s.libunwind, (unsigned long long)s.aside,
             (unsigned long long)s.steps_aside, (unsigned long long)s.rules_read,
             (unsigned long long)s.rules_none, (unsigned long long)s.site_growths);
    hsr_warn(msg);
}

void hsr_stacks_after_fork_child(void) { atomic_store(&lost, 0); }
