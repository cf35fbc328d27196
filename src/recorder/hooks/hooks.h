/*
 * hooks.h — the next definitions of the interposed functions (malloc.c): the
 * allocator underneath, found with dlsym(RTLD_NEXT) on first use.
 */
#ifndef HSR_HOOKS_H
#define HSR_HOOKS_H

#include "common.h"

struct hsr_real {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);        /* NULL: use posix_memalign */
    void *(*memalign)(size_t, size_t);             /* NULL: use posix_memalign */
    void *(*valloc)(size_t);                       /* NULL: use posix_memalign */
    void *(*pvalloc)(size_t);                      /* NULL: use posix_memalign */
    void *(*reallocarray)(void *, size_t, size_t); /* NULL: use realloc */
};
extern HSR_HIDDEN struct hsr_real hsr_real;
HSR_HIDDEN void hsr_resolve(void);
/* dlsym(RTLD_NEXT, name), guarded; NULL if there is no next definition */
HSR_HIDDEN void *hsr_next(const char *name);

/* hot.c: the fast path each family of hooks may take (one byte each, so that a
 * hook tests one): 0 until the constructor is done, then recomputed by
 * hsr_hot_update() whenever one of its inputs changes (hsr_real, hsr_recording,
 * hsr_stacks_on, hsr_heap_watch, hsr_ops_wrap_malloc, hsr_access_on). Their order lets
 * each test be one compare: the modes from SAMPLED on take frees inline the same way
 * (HSR_FAST_INLINE_FREES), ACCESS and SAMPLED, side by side, count down to the next
 * sample (HSR_FAST_COUNTS_DOWN); HEAP's, TRACK's and ACCESS's frees are apart. */
enum {
    HSR_FAST_NONE,    /* the general path: stacks, tracking, the trace, not recording */
    HSR_FAST_GUARDED, /* counts only, the guard held over the allocator's call (a peer) */
    HSR_FAST_HEAP,    /* counts and the heap in use (count/heap.h), over glibc: each block's
                       * usable size read from glibc's chunk header, no guard */
    HSR_FAST_TRACK,   /* tracking (no trace, no exact stacks, no --access), over glibc: the
                       * call counted as SAMPLED's, no guard; the block's birth and death go
                       * straight to tracking (track/track.h) */
    HSR_FAST_ACCESS,  /* as SAMPLED, but record --access sees each free first: over glibc,
                       * its chunk header checked right, it asks the header (access/access.h) */
    HSR_FAST_SAMPLED, /* as BARE, with sampled stacks: frees inline, allocations count
                       * down to the next sample (count/counting.h) */
    HSR_FAST_BARE,    /* counts only, over glibc's malloc and free: no guard needed */
    HSR_FAST_FREES    /* exact stacks, over glibc: frees inline, allocations the general way */
};
struct hsr_hot {
    uint8_t c;   /* malloc and free */
    uint8_t cxx; /* plain operator new/delete when libstdc++'s (wrappers of malloc/free) */
};
extern HSR_HIDDEN struct hsr_hot hsr_hot;
#define HSR_HOT(family) __atomic_load_n(&hsr_hot.family, __ATOMIC_RELAXED)
/* The allocations that count down to the next sample inline: ACCESS and SAMPLED (one
 * unsigned compare: a range). */
#define HSR_FAST_COUNTS_DOWN(fast) ((unsigned)((fast)-HSR_FAST_ACCESS) <= 1u)
/* The frees that go inline, counted and nothing else: SAMPLED, BARE, FREES. */
#define HSR_FAST_INLINE_FREES(fast) ((fast) >= HSR_FAST_SAMPLED)
HSR_HIDDEN void hsr_hot_arm(void); /* the constructor's end: fast paths from now on */
HSR_HIDDEN void hsr_hot_update(void);
extern HSR_HIDDEN int hsr_ops_wrap_malloc; /* cxx.c */

#endif
