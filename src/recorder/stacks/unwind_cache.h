/*
 * unwind_cache.h — exact stacks without a DWARF unwind per allocation (unwind_cache.c).
 *
 * A thread that allocates in a loop unwinds the same stack again and again. The
 * cache keeps, per recent call site of the allocation function, the frames the
 * last DWARF unwind found and the stack slot each return address was read from.
 * When the call site and its slot recur and every slot still holds its return
 * address, the frames are the ones a new unwind would find (why: unwind_cache.c),
 * and they are reused; otherwise the stack is walked by rules read from the DWARF
 * CFI (cfi.c), or, through a frame without a fixed rule, libunwind unwinds it.
 */
#ifndef HSR_UNWIND_CACHE_H
#define HSR_UNWIND_CACHE_H

#include "common.h"

struct hsr_unwind_cache;
struct hsr_stack_entry;

/* What a thread's cache did (HEAPSCOPE_UNWIND_STATS=1 prints the sums at exit). */
struct hsr_unwind_stats {
    uint64_t stacks;     /* asked of the cache */
    uint64_t from_sites; /* frames reused from a call site seen before */
    uint64_t walked;     /* walked by the rules */
    uint64_t joined;     /* of which the walk joined a stack met before on the way up */
    uint64_t libunwind;  /* given to libunwind: a frame without a fixed rule, or an unknown stack */
    uint64_t aside;      /* given to libunwind while the cache stood aside */
    uint64_t steps_aside;
    uint64_t rules_read;   /* rules read from the CFI (return addresses, again after an eviction) */
    uint64_t rules_none;   /* of which without a fixed rule */
    uint64_t site_growths; /* times the call-site table doubled */
};

/* A thread's cache (mmap'd, pages touched as used), or NULL. */
HSR_HIDDEN struct hsr_unwind_cache *hsr_unwind_cache_new(void);
HSR_HIDDEN void hsr_unwind_cache_clear(struct hsr_unwind_cache *c);

/* The caller's stack, recorder frames removed, at most max frames, into out; fp is
 * the frame address of a recorder function on the way (the walk to the first frame
 * outside the recorder starts there)
 * (returns the count; -1: unwind it with libunwind); and
 * *type: the stack type this call site gave last time for (region, size), if the
 * frames came from the cache unchanged (else NULL). The last argument says where
 * the call site's entry is, for hsr_unwind_cache_type. */
HSR_HIDDEN int hsr_unwind_cached(struct hsr_unwind_cache *c, const void *fp, uint64_t *out, int max,
                                 uint32_t region, uint64_t size, struct hsr_stack_entry **type,
                                 void **entry);
/* Remember the type the frames just captured gave (entry from hsr_unwind_cached). */
HSR_HIDDEN void hsr_unwind_cache_type(struct hsr_unwind_cache *c, void *entry, uint32_t region,
                                      uint64_t size, struct hsr_stack_entry *type);

HSR_HIDDEN void hsr_unwind_cache_stats(const struct hsr_unwind_cache *c,
                                       struct hsr_unwind_stats *sum); /* adds c's to sum */
/* Code was unloaded (dlclose): every thread reads its rules again. */
HSR_HIDDEN void hsr_unwind_code_changed(void);

#endif
