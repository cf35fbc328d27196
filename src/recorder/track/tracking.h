/*
 * tracking.h — tracking mode's records and entry points, shared by tracking.c
 * (the side table, births and deaths), tracking_write.c (the TRACK_* chunks of a
 * snapshot) and blocks.c (which calls the entry points).
 */
#ifndef HSR_TRACKING_H
#define HSR_TRACKING_H

#include <time.h>
#include <x86intrin.h>

#include "blocks.h"
#include "recorder.h"

#define HSR_LIFETIME_BINS 64u  /* bin 0: value 0; else floor(log2 v) + 1, capped */

/* A record's counters. Each record has two sets: `own`, written by the thread of
 * table 0 alone (the main thread nearly always: it allocates first) with plain
 * (relaxed load + store) adds, and `shared`, which every other thread adds to
 * atomically; the readers add the two sets up. A locked add costs as much as the
 * rest of a block's tracking, and most programs allocate mostly from their main
 * thread (an MPI rank, a program's serial phases). Only one thread is given a set
 * of its own: a record's lines stay as few as they were in a program whose
 * threads all allocate alike. */
struct hsr_track_counts {
    _Atomic uint64_t allocs, frees, temporaries;
    _Atomic uint64_t extra_bytes;    /* usable minus requested, summed over allocs */
    _Atomic uint64_t time_hist[HSR_LIFETIME_BINS];     /* freed blocks by lifetime, ns */
    _Atomic uint64_t between_hist[HSR_LIFETIME_BINS];  /* by allocations in between */
};

/* What happened to the blocks of one stack trace type, or of one (region, size)
 * when frames is NULL. */
struct hsr_track_rec {
    struct hsr_track_rec *next;       /* list of every record (tracking.c) */
    uint32_t region, depth;
    uint64_t size;
    const uint64_t *frames;          /* the type's frames in stacks.c; NULL: per size */
    _Atomic int64_t live_at_peak;    /* blocks live at the heap peak (live = allocs - frees) */
    /* each set on lines of its own: the fields above are read by every thread */
    _Alignas(64) struct hsr_track_counts own;
    _Alignas(64) struct hsr_track_counts shared;
};

/* A counter of a record, both sets added up (readers). */
#define HSR_TRACK_TOTAL(r, field)                                          \
    (atomic_load_explicit(&(r)->own.field, memory_order_relaxed) +        \
     atomic_load_explicit(&(r)->shared.field, memory_order_relaxed))

struct hsr_track_settings {
    uint64_t temp_between;  /* N: a temporary has at most N allocations in between */
    uint64_t temp_ns;       /* and lives at most this long (0: no time bound) */
    uint64_t max_blocks;    /* side table bound */
};
extern HSR_HIDDEN struct hsr_track_settings hsr_track;

struct hsr_track_figures {
    int64_t peak_bytes;
    uint64_t peak_mono_ns;
    int64_t end_bytes;
    uint64_t untracked;
    int64_t table_bytes;
};

/* A global figure every thread changes (bytes live, blocks in the side table):
 * the thread of table 0 (the main thread nearly always: it allocates first) adds
 * to `first` with plain adds, the others to `rest` atomically; the figure is the
 * sum. One table has one thread at a time, so `first` has one writer. */
struct hsr_split {
    _Atomic int64_t first, rest;
};

/* Add n; the figure after it. t: the calling thread's table, or NULL. */
static inline int64_t hsr_split_add(struct hsr_split *c, const struct hsr_thread *t, int64_t n)
{
    if (HSR_LIKELY(t && t->index == 0)) {
        int64_t v = atomic_load_explicit(&c->first, memory_order_relaxed) + n;
        atomic_store_explicit(&c->first, v, memory_order_relaxed);
        return v + atomic_load_explicit(&c->rest, memory_order_relaxed);
    }
    return atomic_fetch_add_explicit(&c->rest, n, memory_order_relaxed) + n +
           atomic_load_explicit(&c->first, memory_order_relaxed);
}

static inline int64_t hsr_split_value(struct hsr_split *c)
{
    return atomic_load(&c->first) + atomic_load(&c->rest);
}

static inline void hsr_split_reset(struct hsr_split *c)
{
    atomic_store(&c->first, 0);
    atomic_store(&c->rest, 0);
}

extern HSR_HIDDEN _Atomic int64_t hsr_track_table_bytes;  /* memory mapped for tracking */

/* tracking.c */
HSR_HIDDEN int hsr_track_born(void *p, uint64_t size, struct hsr_site site, int component);
HSR_HIDDEN int hsr_track_dying(void *p, struct hsr_dying *d);  /* 0: it was tracked */
HSR_HIDDEN void hsr_track_dead(struct hsr_dying *d);
HSR_HIDDEN void hsr_track_revive(struct hsr_dying *d);
HSR_HIDDEN struct hsr_track_rec *hsr_track_records(void);
/* The calling thread's deferred frees processed and handed to the allocator
 * (not from a signal handler). */
HSR_HIDDEN void hsr_track_flush(struct hsr_thread *t);
/* Before a snapshot: every thread's deferred frees counted as deaths (their
 * blocks are handed to the allocator later, by their threads). From a signal
 * handler, those whose side-table shard is locked wait for the next snapshot. */
HSR_HIDDEN void hsr_track_settle(int from_signal);
/* track_born_log.c: the allocation number table o had reached at raw clock `clock`
 * (its number now if its log no longer reaches back that far) */
HSR_HIDDEN uint64_t hsr_seq_at(const struct hsr_thread *o, uint64_t clock);
HSR_HIDDEN void hsr_track_peak_now(void);   /* a pending peak copied (the snapshot) */
HSR_HIDDEN void hsr_track_figures(struct hsr_track_figures *f);

/* fast_clock.c: CLOCK_MONOTONIC ns from the TSC, inline for the hot paths of
 * tracking and the trace. */
struct hsr_tsc_params { uint64_t tsc0, ns0, scale; };  /* scale: ns per tick, 32.32 */
struct hsr_tsc_clock {
    _Atomic int use_tsc;
    _Atomic unsigned current;        /* the slot in use; the refinement fills the other */
    struct hsr_tsc_params slot[2];
};
extern HSR_HIDDEN struct hsr_tsc_clock hsr_tsc;

static inline uint64_t hsr_tsc_convert(const struct hsr_tsc_params *p, uint64_t tsc)
{
    uint64_t ticks = tsc > p->tsc0 ? tsc - p->tsc0 : 0;
    return p->ns0 + (uint64_t)(((unsigned __int128)ticks * p->scale) >> 32);
}

static inline uint64_t hsr_clock_ns(void)
{
    if (HSR_UNLIKELY(!atomic_load_explicit(&hsr_tsc.use_tsc, memory_order_relaxed)))
        return hsr_now_ns(CLOCK_MONOTONIC);
    unsigned cur = atomic_load_explicit(&hsr_tsc.current, memory_order_acquire);
    return hsr_tsc_convert(&hsr_tsc.slot[cur], __rdtsc());
}

/* The raw clock of tracking's birth and death times: TSC ticks when the TSC is
 * used (hsr_tsc.use_tsc, fixed before the first block is tracked), else ns. Births
 * keep it raw; only a lifetime (a difference) is converted, at the block's death:
 * one conversion per block instead of two. */
static inline uint64_t hsr_clock_raw(void)
{
    if (HSR_UNLIKELY(!atomic_load_explicit(&hsr_tsc.use_tsc, memory_order_relaxed)))
        return hsr_now_ns(CLOCK_MONOTONIC);
    return __rdtsc();
}

/* ns from raw clock `from` to `to` (0 if `to` is not later). */
static inline uint64_t hsr_clock_raw_span(uint64_t from, uint64_t to)
{
    if (to <= from)
        return 0;
    if (HSR_UNLIKELY(!atomic_load_explicit(&hsr_tsc.use_tsc, memory_order_relaxed)))
        return to - from;
    unsigned cur = atomic_load_explicit(&hsr_tsc.current, memory_order_acquire);
    return (uint64_t)(((unsigned __int128)(to - from) * hsr_tsc.slot[cur].scale) >> 32);
}

/* CLOCK_MONOTONIC ns of a raw clock reading. */
static inline uint64_t hsr_clock_raw_ns(uint64_t raw)
{
    if (HSR_UNLIKELY(!atomic_load_explicit(&hsr_tsc.use_tsc, memory_order_relaxed)))
        return raw;
    unsigned cur = atomic_load_explicit(&hsr_tsc.current, memory_order_acquire);
    return hsr_tsc_convert(&hsr_tsc.slot[cur], raw);
}

/* Blocks of r live now. */
static inline int64_t hsr_track_live(struct hsr_track_rec *r)
{
    uint64_t frees = HSR_TRACK_TOTAL(r, frees);
    return (int64_t)(HSR_TRACK_TOTAL(r, allocs) - frees);
}

#endif
