/*
 * fast_clock.c — CLOCK_MONOTONIC nanoseconds for every block in tracking and trace
 * mode, read from the CPU's time-stamp counter when the kernel itself uses it.
 *
 * clock_gettime costs ~40 ns in a VM, rdtsc about half; tracking reads the clock
 * at each birth and death. The counter is converted with a scale measured once
 * against CLOCK_MONOTONIC (2 ms), in 32.32 fixed point. Only when the kernel's
 * clocksource is "tsc" (so the counter is invariant and synchronized across CPUs);
 * otherwise clock_gettime. The hot paths read it inline (hs_clock_ns, tracking.h):
 * a call per read cost a few percent of tracking mode.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "recorder.h"
#include "tracking.h"

struct hs_tsc_clock hs_tsc;  /* read inline by hs_clock_ns (tracking.h) */

uint64_t hs_fast_ns(void) { return hs_clock_ns(); }

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

void hs_fast_clock_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    if (!kernel_uses_tsc())
        return;
    uint64_t t_start = __rdtsc(), n_start = hs_now_ns(CLOCK_MONOTONIC), n_end, t_end;
    do {
        t_end = __rdtsc();
        n_end = hs_now_ns(CLOCK_MONOTONIC);
    } while (n_end - n_start < 2000000);
    if (t_end <= t_start)
        return;
    hs_tsc.scale = (uint64_t)(((unsigned __int128)(n_end - n_start) << 32) / (t_end - t_start));
    hs_tsc.tsc0 = t_end;
    hs_tsc.ns0 = n_end;
    hs_tsc.use_tsc = hs_tsc.scale != 0;
}
