/*
 * tracking.h — tracking mode's records, counters and global figures, shared by
 * the files of track/: births.c, deaths.c and deferred.c (what happens to each
 * block), peak.c (the heap peak, the figures), records.c and table.c (the records
 * and the side table of live blocks), write.c (the TRACK_* chunks of a snapshot),
 * settings.c and fork.c. The interface to the rest of the recorder: track.h.
 */
#ifndef HSR_TRACKING_H
#define HSR_TRACKING_H

#include "common.h"
#include "core/fast_clock.h"
#include "count/thread.h"
#include "track/thread.h"
#include "track/track.h"

#define HSR_LIFETIME_BINS 64u /* bin 0: value 0; else floor(log2 v) + 1, capped */

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
    _Atomic uint64_t extra_bytes;                  /* usable minus requested, summed over allocs */
    _Atomic uint64_t time_hist[HSR_LIFETIME_BINS]; /* freed blocks by lifetime, ns */
    _Atomic uint64_t between_hist[HSR_LIFETIME_BINS]; /* by allocations in between */
};

/* What happened to the blocks of one stack trace type, or of one (region, size)
 * when frames is NULL. */
struct hsr_track_rec {
    struct hsr_track_rec *next; /* list of every record (records.c) */
    uint32_t region, depth;
    uint32_t id; /* its number in the compact side table (table.h); 0: none */
    uint64_t size;
    const uint64_t *frames;       /* the type's frames in stacks/stacks.c; NULL: per size */
    _Atomic int64_t live_at_peak; /* blocks live at the heap peak (live = allocs - frees) */
    /* each set on lines of its own: the fields above are read by every thread */
    _Alignas(64) struct hsr_track_counts own;
    _Alignas(64) struct hsr_track_counts shared;
};

/* A counter of a record, both sets added up (readers). */
#define HSR_TRACK_TOTAL(r, field)                                  \
    (atomic_load_explicit(&(r)->own.field, memory_order_relaxed) + \
     atomic_load_explicit(&(r)->shared.field, memory_order_relaxed))

struct hsr_track_settings {
    uint64_t temp_between; /* N: a temporary has at most N allocations in between */
    uint64_t temp_ns;      /* and lives at most this long (0: no time bound) */
    uint64_t max_blocks;   /* side table bound */
};
extern HSR_HIDDEN struct hsr_track_settings hsr_track;

struct hsr_track_figures {
    int64_t peak_bytes;
    uint64_t peak_mono_ns;
    int64_t end_bytes;
    uint64_t untracked;
    uint64_t untracked_bytes;
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

extern HSR_HIDDEN _Atomic int64_t hsr_track_table_bytes; /* memory mapped for tracking */

HSR_HIDDEN struct hsr_track_rec *hsr_track_records(void); /* records.c: every record */

/* Add n to a record's counter: plainly to its own set from table 0's thread
 * (see struct hsr_track_counts), else atomically. */
static inline void hsr_track_bump(_Atomic uint64_t *own, _Atomic uint64_t *shared, int mine,
                                  uint64_t n)
{
    if (HSR_LIKELY(mine))
        atomic_store_explicit(own, atomic_load_explicit(own, memory_order_relaxed) + n,
                              memory_order_relaxed);
    else
        atomic_fetch_add_explicit(shared, n, memory_order_relaxed);
}
#define HSR_TRACK_BUMP(r, mine, field, n) \
    hsr_track_bump(&(r)->own.field, &(r)->shared.field, mine, n)

/* ---- peak.c: the heap peak and the global figures ---- */
extern HSR_HIDDEN struct hsr_split
    hsr_track_live_bytes;                               /* requested bytes of tracked blocks live */
extern HSR_HIDDEN _Atomic int64_t hsr_track_max_bytes;  /* the peak of hsr_track_live_bytes */
extern HSR_HIDDEN _Atomic uint64_t hsr_track_max_ns;    /* and when (since the start) */
extern HSR_HIDDEN _Atomic int hsr_track_peak_pending;   /* a new maximum not copied yet */
extern HSR_HIDDEN _Atomic uint64_t hsr_track_untracked; /* blocks the table did not take */
extern HSR_HIDDEN _Atomic uint64_t hsr_track_untracked_bytes; /* their requested bytes */
/* A block tracking could not take: counted, with its bytes (births.c, deaths.c). */
static inline void hsr_track_left_out(uint64_t size)
{
    atomic_fetch_add_explicit(&hsr_track_untracked, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&hsr_track_untracked_bytes, size, memory_order_relaxed);
}
HSR_HIDDEN void hsr_track_peak_now(void); /* a pending peak copied (first death, snapshot) */
HSR_HIDDEN void hsr_track_figures(struct hsr_track_figures *f);
HSR_HIDDEN void hsr_track_peak_reset(void); /* fork child */

/* ---- deferred.c ---- */
struct hsr_slot;
/* A birth found `dead` in the table at its address: count its death; the free's clock. */
HSR_HIDDEN uint64_t hsr_track_replaced_died(struct hsr_thread *t, const struct hsr_slot *dead,
                                            uint64_t now);
HSR_HIDDEN void hsr_track_deferred_reset(void); /* fork child: rings and hints empty */

/* fork.c: the handlers, registered once tracking is on */
HSR_HIDDEN void hsr_track_atfork(void);

/* Blocks of r live now. */
static inline int64_t hsr_track_live(struct hsr_track_rec *r)
{
    uint64_t frees = HSR_TRACK_TOTAL(r, frees);
    return (int64_t)(HSR_TRACK_TOTAL(r, allocs) - frees);
}

#endif
