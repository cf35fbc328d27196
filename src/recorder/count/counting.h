/*
 * counting.h — the hot path: count one call in the calling thread's own table.
 *
 * Inline so each hook pays a few loads and adds, no call. The tables and their
 * slow paths (first use of a thread or region, sizes >= HSR_SMALL_SIZES, stack
 * capture) live in counters.c and stacks.c. Call with the guard held.
 */
#ifndef HSR_COUNTING_H
#define HSR_COUNTING_H

#include "recorder.h"

struct hsr_region_counts {
    _Atomic uint64_t api[16];
    _Atomic uint64_t small[HSR_SMALL_SIZES];
};

struct hsr_size_table;

/* tracking.c: a thread's last frees of small blocks, processed a few frees later
 * (deferred frees, tracking.c). `version` is odd while the owner writes. */
#define HSR_FREED_RING 8u
#define HSR_BORN_LOG 1024u               /* a power of two */
struct hsr_freed_ring {
    _Atomic uint64_t version;
    unsigned next;                  /* the oldest entry, the next to go */
    struct hsr_freed {
        _Atomic uint64_t addr;      /* 0: empty */
        _Atomic uint64_t clock;     /* raw clock at the free */
        _Atomic uint64_t seq;       /* the freeing table's allocation number then */
    } e[HSR_FREED_RING];
};

struct hsr_thread {
    struct hsr_thread *next;                 /* list of all tables, append-only */
    _Atomic int in_use;
    struct hsr_size_table *_Atomic large;
    struct hsr_stack_table *_Atomic stacks;  /* stacks.c, created on first capture */
    /* heap_accounting.c: bytes this thread allocated minus bytes it freed (signed:
     * a block freed by another thread makes that thread's figure negative), and
     * the part inside component calls. Only the owner writes; never reset. */
    _Atomic int64_t heap_bytes, heap_component_bytes;
    /* tracking.c: allocations this table's threads made (owner writes), and the
     * table's index (hsr_thread_at), both kept when a new thread adopts the table */
    _Atomic uint64_t alloc_seq;
    uint32_t index;
    struct hsr_freed_ring freed;             /* tracking.c, only the owner writes */
    /* tracking.c: the birth clock of each of this table's last allocations, by
     * allocation number: a death another thread counts late finds from it the
     * number this table had reached at the free. Only the owner writes. */
    struct hsr_born_log {
        _Atomic uint64_t seq, clock;
    } born_log[HSR_BORN_LOG];
    /* trace.c: this table's event buffer, and its lock (contended by snapshots only) */
    _Atomic int trace_lock;
    struct hsr_trace_buf *trace;
    struct hsr_region_counts *_Atomic regions[HSR_MAX_REGIONS];
};

HSR_HIDDEN struct hsr_region_counts *hsr_region_counts_new(struct hsr_thread *t, uint32_t region);
HSR_HIDDEN void hsr_count_large(struct hsr_thread *t, uint32_t region, uint64_t size);

static inline struct hsr_region_counts *hsr_counts_here(uint32_t region, struct hsr_thread **self)
{
    struct hsr_thread *t = hsr_self;
    if (HSR_UNLIKELY(!t) && !(t = hsr_thread_attach()))
        return NULL;
    *self = t;
    struct hsr_region_counts *rc = atomic_load_explicit(&t->regions[region], memory_order_relaxed);
    return HSR_LIKELY(rc) ? rc : hsr_region_counts_new(t, region);
}

/* hsr_size_selected, with its common answers inline. */
static inline int hsr_size_wanted(uint64_t size)
{
    if (hsr_select_all)
        return 1;
    if (size < HSR_SELECT_SMALL_LIMIT)
        return (hsr_select_bits[size / 64] >> (size % 64)) & 1;
    return hsr_size_selected(size);
}

/* Where an allocation was counted: its region, and its stack trace type when
 * its stack was captured (else NULL). Tracking and the trace use it. */
struct hsr_site {
    uint32_t region;
    struct hsr_stack_entry *type;
};

/* An allocation of `size` bytes (requested) by API function `api`. */
static inline __attribute__((always_inline)) struct hsr_site hsr_count_alloc(unsigned api,
                                                                           uint64_t size,
                                                                           int failed)
{
    struct hsr_thread *t;
    uint32_t r = hsr_current_region();
    struct hsr_site site = {r, NULL};
    struct hsr_region_counts *rc = hsr_counts_here(r, &t);
    if (HSR_UNLIKELY(!rc))
        return site;
    hsr_bump(&rc->api[api], 1);
    if (HSR_UNLIKELY(failed))
        hsr_bump(&rc->api[HS_API_FAILED], 1);
    if (HSR_LIKELY(size < HSR_SMALL_SIZES))
        hsr_bump(&rc->small[size], 1);
    else
        hsr_count_large(t, r, size);
    if (HSR_UNLIKELY(hsr_stacks_on) && hsr_region_stacks[r] && hsr_size_wanted(size))
        site.type = hsr_stack_record(t, r, size);
    return site;
}

/* A call that allocates nothing (free, delete, realloc(p, 0), a failure). */
static inline void hsr_count_call(unsigned api)
{
    struct hsr_thread *t;
    struct hsr_region_counts *rc = hsr_counts_here(hsr_current_region(), &t);
    if (HSR_LIKELY(rc))
        hsr_bump(&rc->api[api], 1);
}

#endif
