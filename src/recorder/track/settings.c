/*
 * settings.c — tracking mode's switch and settings: HEAPSCOPE_TRACK, and the
 * bounds of a temporary and of the side table (shared with trace mode).
 *
 * A temporary: freed with at most N (HEAPSCOPE_TEMP_BETWEEN, default 0) other
 * allocations of the allocating thread in between, and, if HEAPSCOPE_TEMP_NS is
 * set, within that many nanoseconds. "The allocating thread" is its count table:
 * a thread that starts after another ended adopts the ended one's table.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/fast_clock.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "count/heap.h"
#include "track/records.h"
#include "track/table.h"
#include "track/track.h"
#include "track/tracking.h"

int hsr_track_on;
struct hsr_track_settings hsr_track = {0, 0, HSR_TRACK_MAX_BLOCKS_DEFAULT};

static uint64_t env_number(const char *name, uint64_t fallback, uint64_t lo, uint64_t hi)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end || *v == '-' || n < lo || n > hi) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s must be a whole number %llu..%llu, using %llu", name,
                 (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)fallback);
        hsr_warn(msg);
        return fallback;
    }
    return n;
}

/* The table's bound unless set: as many blocks as a share of the memory the process
 * may have holds (config.h), never fewer than the old fixed default. sysconf and
 * getrlimit allocate nothing. */
static uint64_t default_max_blocks(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t mem = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < mem)
        mem = rl.rlim_cur;
    uint64_t n = mem / HSR_TRACK_TABLE_MEMORY_SHARE / HSR_TRACK_SLOT_BYTES_WORST;
    return n > HSR_TRACK_MAX_BLOCKS_DEFAULT ? n : HSR_TRACK_MAX_BLOCKS_DEFAULT;
}

/* From the first allocation on (hooks/malloc.c calls this when it first resolves the
 * allocator, before any constructor), and at the latest from our constructor. */
__attribute__((constructor(101))) void hsr_tracking_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    const char *on = getenv("HEAPSCOPE_TRACK");
    const char *trace = getenv("HEAPSCOPE_TRACE");
    int track = on && *on && strcmp(on, "0") != 0;
    if (!track && !(trace && *trace && strcmp(trace, "0") != 0))
        return;
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    /* the temporary's bounds are the trace's too */
    hsr_track.temp_between = env_number("HEAPSCOPE_TEMP_BETWEEN", 0, 0, (1ull << 40) - 1);
    hsr_track.temp_ns = env_number("HEAPSCOPE_TEMP_NS", 0, 0, UINT64_MAX);
    hsr_track.max_blocks =
        env_number("HEAPSCOPE_TRACK_MAX_BLOCKS", default_max_blocks(), 1, (1ull << 40) - 1);
    if (!track) {
        hsr_guard = saved_guard;
        return;
    }
    hsr_fast_clock_init(); /* before the table's first generation is dated with it */
    if (hsr_track_records_init() || hsr_table_init()) {
        hsr_warn("cannot map the tracking tables: tracking off");
    } else {
        hsr_track_atfork();
        hsr_track_on = 1;
        hsr_heap_watch = 1;
    }
    hsr_guard = saved_guard;
}
