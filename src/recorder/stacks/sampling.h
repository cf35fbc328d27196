/*
 * sampling.h — stacks by sampling (HEAPSCOPE_SAMPLE_BYTES=N): a stack is taken at
 * the allocations a byte-driven Poisson process picks, mean N bytes apart, in every
 * size and region, while the counts stay exact.
 *
 * Each thread counts down the bytes left until its next sample (hsr_tls.sample_left,
 * core/tls.h). The counting fast path subtracts each allocation's size and leaves
 * the countdown to the general path when it would reach zero; the general path
 * (hsr_count_alloc) subtracts for the calls the fast path did not count. An
 * allocation that crosses the countdown takes a stack; the next countdown is drawn
 * from an exponential distribution of mean N, so each allocation of s bytes is
 * sampled with probability 1 - exp(-s/N), independently of the others (the
 * exponential has no memory). The reader turns sample counts back into estimates
 * (analysis/sampling.py). Zero-byte allocations consume no bytes and are never
 * sampled.
 */
#ifndef HSR_SAMPLING_H
#define HSR_SAMPLING_H

#include "common.h"
#include "core/tls.h"

struct hsr_thread;
struct hsr_stack_entry;

extern HSR_HIDDEN uint64_t hsr_sample_mean; /* N; 0 = no sampling */

/* Reads HEAPSCOPE_SAMPLE_BYTES / HEAPSCOPE_SAMPLE_SEED (a value to warn about:
 * message in err, sampling off). */
HSR_HIDDEN int hsr_sampling_init(const char *mean, const char *seed, char *err, size_t errlen);

/* The countdown crossed (or is not drawn yet in this thread): the stack of this
 * allocation when it is a sample, else NULL. */
HSR_HIDDEN struct hsr_stack_entry *hsr_sample_crossed(struct hsr_thread *t, uint32_t region,
                                                      uint64_t size);

/* access/ (record --access) asks before the real call whether an allocation will be
 * the sample: the countdown must be drawn for that (this thread's first allocation). */
HSR_HIDDEN void hsr_sample_ready(void);

/* The general path's share of the countdown (only while sampling): every allocation
 * it counts. */
static inline __attribute__((always_inline)) struct hsr_stack_entry *hsr_sample_count(
    struct hsr_thread *t, uint32_t region, uint64_t size)
{
    int64_t left = hsr_tls.sample_left - (int64_t)size;
    if (HSR_LIKELY(left > 0)) {
        hsr_tls.sample_left = left;
        return NULL;
    }
    return hsr_sample_crossed(t, region, size);
}

#endif
