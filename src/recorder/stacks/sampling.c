/*
 * sampling.c — the slow half of sampled stacks (sampling.h): drawing each thread's
 * next countdown and taking the stack of the allocation that crossed it.
 *
 * The countdown is -ln(U) * N with U uniform in (0, 1], from a per-thread
 * xorshift64* generator: one draw per sample, none per allocation. Seeds differ
 * per thread (the main thread's number 0, the others' in order of their first
 * sample mixed in); HEAPSCOPE_SAMPLE_SEED fixes the process's seed, so a
 * deterministic single-threaded program samples the same allocations every run.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "count/regions.h"
#include "stacks/sampling.h"
#include "stacks/stacks.h"

uint64_t hsr_sample_mean;
static uint64_t process_seed;
static _Atomic uint64_t threads_seeded; /* threads other than the main one */
static HSR_TLS uint64_t rng;            /* 0: not seeded yet in this thread */

int hsr_sampling_init(const char *mean, const char *seed, char *err, size_t errlen)
{
    hsr_sample_mean = 0;
    if (!mean || !*mean)
        return 0;
    char *end;
    unsigned long long n = strtoull(mean, &end, 10);
    if (*end || n < 1 || n > (1ull << 40) || *mean == '-') {
        snprintf(err, errlen, "HEAPSCOPE_SAMPLE_BYTES must be a byte count 1..2^40, got '%s'",
                 mean);
        return -1;
    }
    if (seed && *seed) {
        unsigned long long s = strtoull(seed, &end, 10);
        if (*end) {
            snprintf(err, errlen, "HEAPSCOPE_SAMPLE_SEED must be a number, got '%s'", seed);
            return -1;
        }
        process_seed = s;
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        process_seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)getpid();
    }
    hsr_sample_mean = n;
    return 0;
}

/* splitmix64: turns related seeds (thread ids) into unrelated generator states. */
static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t next_random(void)
{
    if (HSR_UNLIKELY(!rng)) {
        uint64_t n = syscall(SYS_gettid) == getpid() ? 0 : 1 + atomic_fetch_add(&threads_seeded, 1);
        rng = mix(process_seed ^ mix(n));
        if (!rng)
            rng = 1;
    }
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

/* Bytes until the next sample: an exponential X of mean N, rounded up. An allocation of
 * s bytes crosses a countdown c when c <= s: P(ceil(X) <= s) = P(X <= s) = 1 - exp(-s/N),
 * and what is left after it goes by, ceil(X) - s given ceil(X) > s, is distributed as
 * ceil(X) again, so every allocation is a sample with that same probability, the first
 * after a sample too (rounding down gave the first one 1 - exp(-(s+1)/N)). */
static int64_t draw_countdown(void)
{
    double u = ((double)(next_random() >> 11) + 1.0) * 0x1.0p-53; /* (0, 1] */
    double bytes = ceil(-log(u) * (double)hsr_sample_mean);
    if (bytes < 1.0)
        return 1;
    return bytes > 0x1.0p62 ? (int64_t)1 << 62 : (int64_t)bytes;
}

void hsr_sample_ready(void)
{
    if (hsr_tls.sample_left == 0)
        hsr_tls.sample_left = draw_countdown(); /* as hsr_sample_crossed's first draw */
}

struct hsr_stack_entry *hsr_sample_crossed(struct hsr_thread *t, uint32_t region, uint64_t size)
{
    if (hsr_tls.sample_left == 0) { /* this thread's first allocation: draw, then count it */
        hsr_tls.sample_left = draw_countdown();
        int64_t left = hsr_tls.sample_left - (int64_t)size;
        if (left > 0) {
            hsr_tls.sample_left = left;
            return NULL;
        }
    }
    hsr_tls.sample_left = draw_countdown();
    if (!size || !hsr_region_stacks[region])
        return NULL;
    return hsr_stack_record(t, region, size);
}
