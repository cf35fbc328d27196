/*
 * fast_clock.h — CLOCK_MONOTONIC nanoseconds from the TSC when the kernel uses it
 * (fast_clock.c), inline for the hot paths of tracking and the trace; and the raw
 * clock of tracking's births and deaths.
 */
#ifndef HSR_FAST_CLOCK_H
#define HSR_FAST_CLOCK_H

#include <time.h>
#include <x86intrin.h>

#include "common.h"
#include "core/lifecycle.h"

HSR_HIDDEN void hsr_fast_clock_init(void);
HSR_HIDDEN void hsr_fast_clock_refine(void); /* the sampler thread, about once a second */

struct hsr_tsc_params {
    uint64_t tsc0, ns0, scale;
}; /* scale: ns per tick, 32.32 */
struct hsr_tsc_clock {
    _Atomic int use_tsc;
    _Atomic unsigned current; /* the slot in use; the refinement fills the other */
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

#endif
