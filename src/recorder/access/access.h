/*
 * access.h — record --access (HEAPSCOPE_ACCESS=1): which pages of the sampled blocks
 * the program read or wrote between their allocation and their free (or the end).
 * What the hooks call; the mechanism is described in internal.h and docs/recorder.md
 * ("Memory allocated and not used").
 *
 * The sampled blocks are the stacks' byte samples (stacks/sampling.h): a hook asks
 * hsr_access_take before its real allocation whether this allocation is the one the
 * countdown will pick (hsr_count_alloc then takes its stack as usual); a small one is
 * served from the recorder's pool of pages. After counting, hsr_access_born starts
 * measuring it. Every free and realloc first asks whether the block is a pool block
 * (which must never reach the allocator) or a block measured in place: over glibc, the
 * frees' fast path asks glibc's chunk header first (hsr_access_concerns_glibc).
 *
 * Off (hsr_access_on 0), the hooks pay one predictable branch on their general path
 * and nothing on their fast path (hot.c keeps the frees out of line only while on).
 */
#ifndef HSR_ACCESS_H
#define HSR_ACCESS_H

#include "common.h"

struct hsr_stack_entry;
struct hsr_buf;

extern HSR_HIDDEN int hsr_access_on;
extern HSR_HIDDEN uintptr_t hsr_access_pool_lo;  /* the pool's reserved range: */
extern HSR_HIDDEN uintptr_t hsr_access_pool_len; /* [lo, lo + len), 0 without one */

/* A block of the recorder's pool (one compare). */
static inline int hsr_access_owns(const void *p)
{
    return (uintptr_t)p - hsr_access_pool_lo < hsr_access_pool_len;
}

/* Blocks measured in place, counted by the page of their start (a hash: the low bits of
 * its page number): a free whose slot is 0 is none of them (read without the lock;
 * blocks.c keeps it). */
#define HSR_ACCESS_FILTER 16384u
extern HSR_HIDDEN uint16_t hsr_access_filter[HSR_ACCESS_FILTER];
static inline uint32_t hsr_access_filter_slot(uintptr_t a)
{
    return (uint32_t)(a >> 12) & (HSR_ACCESS_FILTER - 1);
}

/* A free or realloc of p needs hsr_access_free / hsr_access_realloc: a handful of
 * instructions, inline on the frees' fast path while measuring (hot.c, ACCESS). */
static inline int hsr_access_concerns(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    return (a - hsr_access_pool_lo < hsr_access_pool_len) |
           (hsr_access_filter[hsr_access_filter_slot(a)] != 0);
}

/* hsr_access_concerns for a block of glibc's malloc, whose chunk header (the word before
 * the block, count/heap.h) was checked to hold its size: the frees' fast path (hot.c,
 * ACCESS). A pool block starts a page (pool.c), and so does a block measured in place
 * unless its chunk is HSR_ACCESS_LARGE bytes or more (aligned beyond a page, else that
 * large: blocks.c); so a block that starts no page, its chunk smaller, is neither, told
 * by the address and the word glibc's free reads next (on the block's own page: the
 * block is 16 bytes or more into it). The others ask the pool's range and the filter. */
static inline int hsr_access_concerns_glibc(const void *p)
{
    if (HSR_LIKELY((uintptr_t)p & (HSR_ACCESS_PAGE_MIN - 1)) &&
        HSR_LIKELY(((const size_t *)p)[-1] < HSR_ACCESS_LARGE)) /* size, flags in bits 0-2 */
        return 0;
    return hsr_access_concerns(p);
}

/* Settings (lifecycle.c, after the stacks' sampling is set); the watcher thread
 * (lifecycle.c, with the timeline's). */
HSR_HIDDEN void hsr_access_init(void);
HSR_HIDDEN void hsr_access_start(void);

/* Before a real allocation of `size` bytes aligned to `align` (0: malloc's), guard
 * held and recording: a pool block when this allocation is a sample and fits one,
 * else NULL (then the real call). */
HSR_HIDDEN void *hsr_access_take(uint64_t size, size_t align);
/* After it was counted: p (NULL: failed), its stack type and region from the count,
 * `kept` bytes carried over by a realloc. */
HSR_HIDDEN void hsr_access_born(void *p, uint64_t size, struct hsr_stack_entry *type,
                                uint32_t region, unsigned api, uint64_t kept);
/* Any free or delete, in any state (guard, recording off): 1 when p was a pool block
 * (released here; counted as a call of `api` when counting applies), 0 to go on with
 * the real free (a block measured in place has been read first). */
HSR_HIDDEN int hsr_access_free(void *p, unsigned api);
/* realloc while measuring (guard held, recording): the new block; `kept` gets the
 * bytes carried over. raw: not recording (no sample is taken). */
HSR_HIDDEN void *hsr_access_realloc(void *old, size_t n, uint64_t *kept, int raw);

/* malloc_usable_size: the pool's blocks', else the next allocator's (0 without one). */
HSR_HIDDEN size_t hsr_access_usable(void *p);
HSR_HIDDEN size_t hsr_access_next_usable(void *p);

/* The ACCESS chunks of a snapshot (output/snapshot.c). */
HSR_HIDDEN void hsr_access_write(struct hsr_buf *b, int from_signal);

/* The job file (job.c): this rank's section of the part (nothing when not measuring;
 * counted gives its allocations of a region id and size), two sections merged, and the
 * JOB_ACCESS* chunks from the reduced one; 0, or -1 (a section that does not hold). */
typedef uint64_t (*hsr_access_counted_fn)(void *ctx, uint32_t region, uint64_t size);
HSR_HIDDEN int hsr_access_job_own(struct hsr_buf *b, int rank, hsr_access_counted_fn counted,
                                  void *ctx);
HSR_HIDDEN int hsr_access_job_merge(const uint8_t *x, size_t xlen, const uint8_t *y, size_t ylen,
                                    struct hsr_buf *out);
HSR_HIDDEN int hsr_access_job_write(struct hsr_buf *b, const uint8_t *section, size_t len);

/* ---- the hooks' one-liners ---- */

/* The block a hook hands out: a pool block, or what `call` (the real allocation)
 * returns. */
#define HSR_ACCESS_ALLOC(size, align, call)                                               \
    ({                                                                                    \
        void *hsr_q_ = HSR_UNLIKELY(hsr_access_on) ? hsr_access_take(size, align) : NULL; \
        hsr_q_ ? hsr_q_ : (call);                                                         \
    })
/* After the count: site is the struct hsr_site the count returned. */
#define HSR_ACCESS_BORN(p, size, site, api)                                     \
    do {                                                                        \
        if (HSR_UNLIKELY(hsr_access_on))                                        \
            hsr_access_born((p), (size), (site).type, (site).region, (api), 0); \
    } while (0)

#endif
