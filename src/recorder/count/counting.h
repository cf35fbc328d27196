/*
 * counting.h — the hot path: count one call in the calling thread's own table.
 *
 * Inline so each hook pays a few loads and adds, no call. The tables and their
 * slow paths (first use of a thread or region, sizes >= HSR_SMALL_SIZES) live in
 * counters.c and threads.c, stack capture in stacks/. Call with the guard held.
 * This header knows the thread record's counts only (thread.h): tracking, the
 * trace and the stack tables keep their per-thread state behind pointers.
 */
#ifndef HSR_COUNTING_H
#define HSR_COUNTING_H

#include "common.h"
#include "count/failed.h"
#include "count/regions.h"
#include "count/selection.h"
#include "count/thread.h"
#include "stacks/sampling.h"
#include "stacks/stacks.h"

struct hsr_region_counts {
    _Atomic uint64_t api[16];
    _Atomic uint64_t small[HSR_SMALL_SIZES];
};

HSR_HIDDEN struct hsr_region_counts *hsr_region_counts_new(struct hsr_thread *t, uint32_t region);
HSR_HIDDEN void hsr_count_large(struct hsr_thread *t, uint32_t region, uint64_t size);

/* The counts of one thread, seen by the merge: calls fn for every nonzero cell. */
typedef void (*hsr_size_fn)(void *ctx, uint32_t region, uint64_t size, uint64_t count);
typedef void (*hsr_api_fn)(void *ctx, uint32_t region, unsigned api, uint64_t calls);
HSR_HIDDEN void hsr_thread_visit(struct hsr_thread *t, void *ctx, hsr_size_fn sizes,
                                 hsr_api_fn apis);
HSR_HIDDEN void hsr_counters_after_fork_child(void); /* every count to zero */

static inline struct hsr_region_counts *hsr_counts_here(uint32_t region, struct hsr_thread **self)
{
    struct hsr_thread *t = hsr_self;
    if (HSR_UNLIKELY(!t) && !(t = hsr_thread_attach()))
        return NULL;
    *self = t;
    struct hsr_region_counts *rc = atomic_load_explicit(&t->regions[region], memory_order_relaxed);
    return HSR_LIKELY(rc) ? rc : hsr_region_counts_new(t, region);
}

/* Where an allocation was counted: its region, and its stack trace type when
 * its stack was captured (else NULL). Tracking and the trace use it. */
struct hsr_site {
    uint32_t region;
    struct hsr_stack_entry *type;
};

/* An allocation of `size` bytes (requested) by API function `api`; failed: the call
 * returned no block (counted as a call of api and of HS_API_FAILED, and apart). */
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
    if (HSR_UNLIKELY(failed)) { /* allocated nothing: in no size row (count/failed.h) */
        hsr_bump(&rc->api[HS_API_FAILED], 1);
        hsr_failed_note(api, size, r);
        return site;
    }
    if (HSR_LIKELY(size < HSR_SMALL_SIZES))
        hsr_bump(&rc->small[size], 1);
    else
        hsr_count_large(t, r, size);
    if (HSR_UNLIKELY(hsr_stacks_on) && hsr_region_stacks[r] && hsr_size_wanted(size))
        site.type = hsr_stack_record(t, r, size);
    else if (HSR_UNLIKELY(hsr_sample_mean))
        site.type = hsr_sample_count(t, r, size); /* NULL unless sampling picks it */
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

/* ---- the fast path of counts-only recording (hooks/hooks.h, struct hsr_hot) ----
 * Counting before the real call, so that the hook needs nothing after it but the
 * pointer, in the thread's cached counts of the process-wide region
 * (hsr_tls.counts: no record or region lookup). 1: counted; 0: nothing counted
 * (the guard is held, a thread or component region applies, the cache is of
 * another region or empty, or a size from HSR_SMALL_SIZES on: no call here, so
 * the hook keeps the size in its argument register up to the real allocator's
 * call). The guard is the caller's. */
static inline __attribute__((always_inline)) int hsr_fast_hit(void)
{
    uint32_t r = atomic_load_explicit(&hsr_process_region, memory_order_relaxed);
    return HSR_LIKELY((hsr_place.any | (uint64_t)hsr_guard) == 0) &&
           HSR_LIKELY(hsr_tls.counts_region == r);
}

static inline __attribute__((always_inline)) int hsr_fast_count_alloc(unsigned api, uint64_t size)
{
    if (HSR_UNLIKELY(!hsr_fast_hit()) || HSR_UNLIKELY(size >= HSR_SMALL_SIZES))
        return 0;
    struct hsr_region_counts *rc = hsr_tls.counts;
    hsr_bump(&rc->api[api], 1);
    hsr_bump(&rc->small[size], 1);
    return 1;
}

static inline __attribute__((always_inline)) int hsr_fast_count_call(unsigned api)
{
    if (HSR_UNLIKELY(!hsr_fast_hit()))
        return 0;
    hsr_bump(&hsr_tls.counts->api[api], 1);
    return 1;
}

/* counters.c: cache the thread's counts of the process-wide region (its record
 * attached, the counts made if need be) when no guard, thread or component region
 * stands in the way; 1 if done. The general path's second try, out of line, so
 * that the modes without a fast path never touch the cache. */
HSR_HIDDEN int hsr_fast_refill(void);

/* Sampled stacks (stacks/sampling.h): the fast path also counts down the bytes to
 * the next sample; a countdown that would end here goes the general way, which
 * takes the sample. Only in this mode: hot.c keeps the inline fast path (which does
 * not count down) off while sampling, so counting alone pays nothing for it. */
static inline int hsr_fast_sampled_alloc(unsigned api, uint64_t size)
{
    if (HSR_UNLIKELY(!hsr_fast_hit()) || HSR_UNLIKELY(size >= HSR_SMALL_SIZES))
        return 0;
    int64_t left = hsr_tls.sample_left - (int64_t)size;
    if (HSR_UNLIKELY(left <= 0))
        return 0;
    hsr_tls.sample_left = left;
    struct hsr_region_counts *rc = hsr_tls.counts;
    hsr_bump(&rc->api[api], 1);
    hsr_bump(&rc->small[size], 1);
    return 1;
}

static inline int hsr_fast_retry_alloc(unsigned api, uint64_t size)
{
    if (HSR_UNLIKELY(hsr_sample_mean))
        return hsr_fast_sampled_alloc(api, size) ||
               (hsr_fast_refill() && hsr_fast_sampled_alloc(api, size));
    return hsr_fast_count_alloc(api, size) ||
           (hsr_fast_refill() && hsr_fast_count_alloc(api, size));
}

/* The fast path's allocation that failed after it was counted: its size count taken
 * back (the same cached counts: nothing in between changed them), the failure noted. */
static inline void hsr_fast_undo_alloc(unsigned api, uint64_t size)
{
    hsr_bump(&hsr_tls.counts->small[size], (uint64_t)-1);
    hsr_bump(&hsr_tls.counts->api[HS_API_FAILED], 1);
    hsr_failed_note(api, size, hsr_tls.counts_region);
}

static inline int hsr_fast_retry_call(unsigned api)
{
    return hsr_fast_count_call(api) || (hsr_fast_refill() && hsr_fast_count_call(api));
}

#endif
