/*
 * counting.h — the hot path: count one call in the calling thread's own table.
 *
 * Inline so each hook pays a few loads and adds, no call. The tables and their
 * slow paths (first use of a thread or region, sizes >= HS_SMALL_SIZES, stack
 * capture) live in counters.c and stacks.c. Call with the guard held.
 */
#ifndef HS_COUNTING_H
#define HS_COUNTING_H

#include "recorder.h"

struct hs_region_counts {
    _Atomic uint64_t api[16];
    _Atomic uint64_t small[HS_SMALL_SIZES];
};

struct hs_size_table;

/* tracking.c: a thread's last frees of small blocks, processed a few frees later
 * (deferred frees, tracking.c). `version` is odd while the owner writes. */
#define HS_FREED_RING 8u
#define HS_BORN_LOG 1024u               /* a power of two */
struct hs_freed_ring {
    _Atomic uint64_t version;
    unsigned next;                  /* the oldest entry, the next to go */
    struct hs_freed {
        _Atomic uint64_t addr;      /* 0: empty */
        _Atomic uint64_t clock;     /* raw clock at the free */
        _Atomic uint64_t seq;       /* the freeing table's allocation number then */
    } e[HS_FREED_RING];
};

struct hs_thread {
    struct hs_thread *next;                 /* list of all tables, append-only */
    _Atomic int in_use;
    struct hs_size_table *_Atomic large;
    struct hs_stack_table *_Atomic stacks;  /* stacks.c, created on first capture */
    /* heap_accounting.c: bytes this thread allocated minus bytes it freed (signed:
     * a block freed by another thread makes that thread's figure negative), and
     * the part inside component calls. Only the owner writes; never reset. */
    _Atomic int64_t heap_bytes, heap_component_bytes;
    /* tracking.c: allocations this table's threads made (owner writes), and the
     * table's index (hs_thread_at), both kept when a new thread adopts the table */
    _Atomic uint64_t alloc_seq;
    uint32_t index;
    struct hs_freed_ring freed;             /* tracking.c, only the owner writes */
    /* tracking.c: the birth clock of each of this table's last allocations, by
     * allocation number: a death another thread counts late finds from it the
     * number this table had reached at the free. Only the owner writes. */
    struct hs_born_log {
        _Atomic uint64_t seq, clock;
    } born_log[HS_BORN_LOG];
    /* trace.c: this table's event buffer, and its lock (contended by snapshots only) */
    _Atomic int trace_lock;
    struct hs_trace_buf *trace;
    struct hs_region_counts *_Atomic regions[HS_MAX_REGIONS];
};

HS_HIDDEN struct hs_region_counts *hs_region_counts_new(struct hs_thread *t, uint32_t region);
HS_HIDDEN void hs_count_large(struct hs_thread *t, uint32_t region, uint64_t size);

static inline struct hs_region_counts *hs_counts_here(uint32_t region, struct hs_thread **self)
{
    struct hs_thread *t = hs_self;
    if (HS_UNLIKELY(!t) && !(t = hs_thread_attach()))
        return NULL;
    *self = t;
    struct hs_region_counts *rc = atomic_load_explicit(&t->regions[region], memory_order_relaxed);
    return HS_LIKELY(rc) ? rc : hs_region_counts_new(t, region);
}

/* hs_size_selected, with its common answers inline. */
static inline int hs_size_wanted(uint64_t size)
{
    if (hs_select_all)
        return 1;
    if (size < HS_SELECT_SMALL_LIMIT)
        return (hs_select_bits[size / 64] >> (size % 64)) & 1;
    return hs_size_selected(size);
}

/* Where an allocation was counted: its region, and its stack trace type when
 * its stack was captured (else NULL). Tracking and the trace use it. */
struct hs_site {
    uint32_t region;
    struct hs_stack_entry *type;
};

/* An allocation of `size` bytes (requested) by API function `api`. */
static inline __attribute__((always_inline)) struct hs_site hs_count_alloc(unsigned api,
                                                                           uint64_t size,
                                                                           int failed)
{
    struct hs_thread *t;
    uint32_t r = hs_current_region();
    struct hs_site site = {r, NULL};
    struct hs_region_counts *rc = hs_counts_here(r, &t);
    if (HS_UNLIKELY(!rc))
        return site;
    hs_bump(&rc->api[api], 1);
    if (HS_UNLIKELY(failed))
        hs_bump(&rc->api[HS_API_FAILED], 1);
    if (HS_LIKELY(size < HS_SMALL_SIZES))
        hs_bump(&rc->small[size], 1);
    else
        hs_count_large(t, r, size);
    if (HS_UNLIKELY(hs_stacks_on) && hs_region_stacks[r] && hs_size_wanted(size))
        site.type = hs_stack_record(t, r, size);
    return site;
}

/* A call that allocates nothing (free, delete, realloc(p, 0), a failure). */
static inline void hs_count_call(unsigned api)
{
    struct hs_thread *t;
    struct hs_region_counts *rc = hs_counts_here(hs_current_region(), &t);
    if (HS_LIKELY(rc))
        hs_bump(&rc->api[api], 1);
}

#endif
