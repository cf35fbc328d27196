/*
 * tls.h — the hot path's thread-local state, in one block.
 *
 * Each initial-exec TLS variable of a shared library costs a load of its offset
 * from the GOT before the thread-pointer access; the hooks read the guard, the
 * thread's place and its record on every call, so those live in one struct and
 * cost one offset load. Their names stay: hsr_guard, hsr_place and hsr_self are
 * its fields, under macros (as glibc's errno is), declared with their meaning in
 * core/guard.h, count/regions.h and count/thread.h.
 */
#ifndef HSR_TLS_H
#define HSR_TLS_H

#include "common.h"

/* Where the calling thread is, read as one word by the hot path: both 0 for most
 * threads most of the time (the process-wide region applies). */
union hsr_thread_place {
    struct {
        uint32_t region;    /* the thread's own region override + 1; 0 = none */
        uint32_t component; /* depth inside a component's calls (MPI, component.c) */
    } in;
    uint64_t any;
};

struct hsr_thread;
struct hsr_region_counts;

/* One cache line: the fast paths read place, guard, counts_region, counts and (sampling)
 * sample_left on every call. */
struct __attribute__((aligned(64))) hsr_tls {
    union hsr_thread_place place; /* count/regions.h */
    int guard;                    /* core/guard.h */
    /* count/counting.h: the fast path's cache, the counts of region
     * `counts_region` in the thread's record (filled by hsr_fast_refill on a
     * miss); HSR_NO_REGION: none (yet, or the record went back at the thread's end) */
    uint32_t counts_region;
    struct hsr_region_counts *counts;
    struct hsr_thread *self; /* count/thread.h */
    /* hooks/cxx.c, hooks/malloc.c: the size the fast operator new or malloc asked
     * glibc's malloc for, kept for the rare NULL (so that nothing stays live across
     * the call: no frame on the fast path) */
    size_t new_size;
    /* stacks/sampling.h: bytes left before this thread's next sampled stack; 0: not
     * drawn yet (the first allocation goes the general way and draws it) */
    int64_t sample_left;
};
#define HSR_NO_REGION UINT32_MAX /* never a region id (< HSR_MAX_REGIONS) */

extern HSR_HIDDEN HSR_TLS struct hsr_tls hsr_tls;

#define hsr_guard (hsr_tls.guard)
#define hsr_place (hsr_tls.place)
#define hsr_self (hsr_tls.self)

#endif
