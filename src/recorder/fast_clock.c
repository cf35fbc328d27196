/*
 * fast_clock.c — CLOCK_MONOTONIC nanoseconds for every block in tracking and trace
 * mode, read from the CPU's time-stamp counter when the kernel itself uses it.
 *
 * clock_gettime costs ~40 ns in a VM, rdtsc about half; tracking reads the clock
 * at each birth and death. The counter is converted with a scale measured once
 * against CLOCK_MONOTONIC (2 ms), in 32.32 fixed point. Only when the kernel's
 * clocksource is "tsc" (so the counter is invariant and synchronized across CPUs);
 * otherwise clock_gettime.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "recorder.h"

static int use_tsc;
static uint64_t tsc0, ns0;
static uint64_t scale;  /* ns per tick, 32.32 fixed point */

uint64_t hs_fast_ns(void)
{
    if (!use_tsc)
        return hs_now_ns(CLOCK_MONOTONIC);
    uint64_t ticks = __rdtsc() - tsc0;
    return ns0 + (uint64_t)(((unsigned __int128)ticks * scale) >> 32);
}

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
    scale = (uint64_t)(((unsigned __int128)(n_end - n_start) << 32) / (t_end - t_start));
    tsc0 = t_end;
    ns0 = n_end;
    use_tsc = scale != 0;
}
