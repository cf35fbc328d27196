/*
 * regions.h — the regions (phases) allocations are counted for (regions.c), and
 * the component child regions of add-on layers such as MPI (component.c). Where
 * the calling thread is, read inline by the hot path.
 */
#ifndef HSR_REGIONS_H
#define HSR_REGIONS_H

#include "common.h"

struct hsr_region {
    uint32_t parent;        /* HS_NO_PARENT for region 0 */
    uint8_t stack_selected; /* stacks wanted for allocations in this region */
    const char *name;       /* "" for region 0 */
};
extern HSR_HIDDEN _Atomic uint32_t hsr_process_region;        /* innermost process-wide */
extern HSR_HIDDEN uint8_t hsr_region_stacks[HSR_MAX_REGIONS]; /* copy of stack_selected */
/* Where the calling thread is, read as one word by the hot path: both 0 for most
 * threads most of the time (the process-wide region applies). */
union hsr_place {
    struct {
        uint32_t region;    /* the thread's own region override + 1; 0 = none */
        uint32_t component; /* depth inside a component's calls (MPI, component.c) */
    } in;
    uint64_t any;
};
extern HSR_HIDDEN HSR_TLS union hsr_place hsr_place;
/* component.c: the component's child region of `parent` (interned on first use) */
HSR_HIDDEN uint32_t hsr_component_region(uint32_t parent);

static inline uint32_t hsr_current_region(void)
{
    union hsr_place p = hsr_place;
    if (HSR_LIKELY(!p.any))
        return atomic_load_explicit(&hsr_process_region, memory_order_relaxed);
    uint32_t r = p.in.region ? p.in.region - 1
                             : atomic_load_explicit(&hsr_process_region, memory_order_relaxed);
    return p.in.component ? hsr_component_region(r) : r;
}
/* The region a thread-only region begun now would nest in: the thread's own,
 * never the component's (a region begun inside an MPI call is not MPI's). */
static inline uint32_t hsr_thread_parent_region(void)
{
    uint32_t t = hsr_place.in.region;
    return t ? t - 1 : atomic_load_explicit(&hsr_process_region, memory_order_relaxed);
}
HSR_HIDDEN uint32_t hsr_region_intern(uint32_t parent, const char *name); /* locks */
HSR_HIDDEN uint32_t hsr_region_count(void); /* ids 0 .. count-1 exist */
HSR_HIDDEN const struct hsr_region *hsr_region_get(uint32_t id);
HSR_HIDDEN void hsr_regions_begin(const char *name, int thread_only);
HSR_HIDDEN void hsr_regions_end(int thread_only);
HSR_HIDDEN void hsr_regions_reselect(void); /* recompute stack_selected (after selection init) */
HSR_HIDDEN uint64_t hsr_regions_unbalanced(void);
HSR_HIDDEN void hsr_regions_lock(void); /* fork */
HSR_HIDDEN void hsr_regions_unlock(void);

#endif
