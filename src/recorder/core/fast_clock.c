/*
 * fast_clock.c — CLOCK_MONOTONIC nanoseconds for every block in tracking and trace
 * mode, read from the CPU's time-stamp counter when the kernel itself uses it.
 *
 * clock_gettime costs ~30 ns in a VM, rdtsc about half; tracking reads the clock at
 * each birth and death. Only when the kernel's clocksource is "tsc" (so the counter
 * is invariant and synchronized across CPUs); otherwise clock_gettime.
 *
 * Conversion: ns = anchor_ns + (tsc - anchor_tsc) * scale (32.32 fixed point).
 * Each (tsc, ns) pair is the tightest of a few rdtsc / clock_gettime / rdtsc reads,
 * so a preempted read does not skew it. At start the scale is measured over 2 ms;
 * hsr_fast_clock_refine (the timeline's sampler thread, about once a second) measures
 * it again from the first pair to a new one — the longer the baseline the better,
 * and it follows the kernel's own adjustments (NTP slews CLOCK_MONOTONIC) — and
 * re-anchors. The clock never goes back: a new anchor is never below what the old
 * parameters give at that instant. Without refinement (timeline off) it drifts by
 * the first scale's error, some tens of microseconds per second at worst.
 *
 * The hot paths read it inline (hsr_clock_ns, fast_clock.h): a call per read cost a
 * few percent of tracking mode. Parameters live in two slots (struct hsr_tsc_clock);
 * a reader loads the current one's index, then it.
 * The writer fills the other slot and switches: a reader would need to sleep through
 * two refinements (two seconds) in the middle of a read to see a torn slot.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "core/fast_clock.h"
#include "core/lifecycle.h"

struct hsr_tsc_clock hsr_tsc;        /* read inline by hsr_clock_ns (fast_clock.h) */
static uint64_t first_tsc, first_ns; /* the baseline's start */

static int kernel_uses_tsc(void)
{
    char source[32] = {0};
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, source, sizeof source - 1);
    close(fd);
    return n >= 3 && strncmp(source, "tsc", 3) == 0 && (n == 3 || source[3] == '\n');
}

/* The tightest of 8 reads: the counter halfway through the clock read. */
static void read_pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t a = __rdtsc(), n = hsr_now_ns(CLOCK_MONOTONIC), b = __rdtsc();
        if (b > a && b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = n;
        }
    }
}

static uint64_t scale_between(uint64_t t0, uint64_t n0, uint64_t t1, uint64_t n1)
{
    if (t1 <= t0 || n1 <= n0)
        return 0;
    return (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0));
}

void hsr_fast_clock_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    if (!kernel_uses_tsc())
        return;
    uint64_t t1 = 0, n1 = 0;
    read_pair(&first_tsc, &first_ns);
    do
        read_pair(&t1, &n1);
    while (n1 - first_ns < 2000000);
    uint64_t scale = scale_between(first_tsc, first_ns, t1, n1);
    if (!scale)
        return;
    hsr_tsc.slot[0] = (struct hsr_tsc_params){t1, n1, scale};
    atomic_store(&hsr_tsc.current, 0);
    atomic_store(&hsr_tsc.use_tsc, 1);
}

void hsr_fast_clock_refine(void)
{
    if (!atomic_load(&hsr_tsc.use_tsc))
        return;
    uint64_t t = 0, n = 0;
    read_pair(&t, &n);
    unsigned cur = atomic_load_explicit(&hsr_tsc.current, memory_order_relaxed);
    uint64_t scale = scale_between(first_tsc, first_ns, t, n);
    if (!scale)
        return;
    uint64_t old = hsr_tsc_convert(&hsr_tsc.slot[cur], t);
    hsr_tsc.slot[!cur] = (struct hsr_tsc_params){t, n > old ? n : old, scale};
    atomic_store_explicit(&hsr_tsc.current, !cur, memory_order_release);
}
