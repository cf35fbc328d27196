/*
 * init.c — record --access's settings and start, and what a fork changes.
 *
 *   HEAPSCOPE_ACCESS=1           measure the sampled blocks (needs HEAPSCOPE_SAMPLE_BYTES:
 *                                the samples are the stacks' samples)
 *   HEAPSCOPE_ACCESS_POLL_MS=N   the watcher's period (1..60000, default 10)
 *   HEAPSCOPE_ACCESS_PAGES=scan|pagemap   the page reader (pages.c; default: the best)
 *
 * What cannot be had (no pagemap, no address space for the pool) is said in one line;
 * the samples are counted all the same, unmeasured, and the report says why.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access/internal.h"
#include "core/lifecycle.h"
#include "count/heap.h"
#include "stacks/sampling.h"

int hsr_access_on;
uintptr_t hsr_access_pool_lo, hsr_access_pool_len;

static void after_fork_parent(void)
{
    if (hsr_access_on)
        hsr_access_blocks_after_fork_parent();
}

static void after_fork_child(void)
{
    if (!hsr_access_on)
        return;
    hsr_access_blocks_after_fork_child();
    hsr_access_rows_after_fork_child();
    hsr_pool_after_fork_child();
    hsr_pages_after_fork_child();
    hsr_watch_after_fork_child();
}

static void read_poll(void)
{
    const char *v = getenv("HEAPSCOPE_ACCESS_POLL_MS");
    if (!v || !*v)
        return;
    char *end;
    long ms = strtol(v, &end, 10);
    if (*end || ms < 1 || ms > 60000) {
        hsr_warn("HEAPSCOPE_ACCESS_POLL_MS must be 1..60000 (ms), using 10");
        return;
    }
    hsr_watch_poll_ns = (uint64_t)ms * 1000000ull;
}

void hsr_access_init(void)
{
    const char *on = getenv("HEAPSCOPE_ACCESS");
    if (!on || !*on || strcmp(on, "0") == 0)
        return;
    if (strcmp(on, "1") != 0) {
        hsr_warn("HEAPSCOPE_ACCESS must be 1 or 0: memory access not measured");
        return;
    }
    if (!hsr_sample_mean) {
        hsr_warn("HEAPSCOPE_ACCESS needs sampled stacks (HEAPSCOPE_SAMPLE_BYTES, not with "
                 "HEAPSCOPE_STACK_SIZES or the trace): memory access not measured");
        return;
    }
    read_poll();
    const char *pages = getenv("HEAPSCOPE_ACCESS_PAGES");
    if (pages && *pages && strcmp(pages, "scan") != 0 && strcmp(pages, "pagemap") != 0) {
        hsr_warn("HEAPSCOPE_ACCESS_PAGES must be scan or pagemap, using the best");
        pages = NULL;
    }
    if (hsr_access_rows_init() != 0 || hsr_access_blocks_init() != 0) {
        hsr_warn("--access: no memory for its tables: memory access not measured");
        return;
    }
    if (hsr_pages_init(pages) != HS_ACCESS_NONE) {
        if (hsr_pool_reserve() == 0) {
            hsr_access_pool_lo = hsr_pool_base;
            hsr_access_pool_len = hsr_pool_span;
        } else {
            hsr_warn("--access: no address space for the pool of pages: sampled blocks under "
                     "64 KiB are counted, not measured");
        }
    }
    hsr_usable_size = hsr_access_usable; /* the heap figure asks about pool blocks too */
    pthread_atfork(NULL, after_fork_parent, after_fork_child);
    hsr_access_on = 1;
}

void hsr_access_start(void)
{
    if (hsr_access_on && hsr_pages_mechanism != HS_ACCESS_NONE)
        hsr_watch_start();
}
