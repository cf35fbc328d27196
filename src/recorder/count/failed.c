/*
 * failed.c — the failed allocation calls of the process, per (region, API, size).
 *
 * Failures are rare and slow anyway (the allocator gave up), so one process-wide
 * table under a spinlock is enough; the hot path never comes here. A dump reads it
 * without the lock (a signal handler may interrupt the lock's holder): a slot is
 * published (ready, release) only once its key is written, and its count is an
 * atomic add. Beyond HSR_FAILED_SLOTS distinct keys, failures are counted per
 * (region, API) without their size, in a row of their own.
 */
#include <string.h>

#include "core/guard.h"
#include "count/failed.h"

struct slot {
    _Atomic int ready;
    uint32_t region, api;
    uint64_t size;
    _Atomic uint64_t calls;
};

static struct slot slots[HSR_FAILED_SLOTS];
/* the table full: counted without a size (bss: no page touched until then) */
static _Atomic uint64_t unsized[HSR_MAX_REGIONS][16];
static _Atomic int lock;
static _Atomic int used, used_unsized; /* anything to visit or clear (most runs: no) */

static struct slot *find(uint32_t region, unsigned api, uint64_t size)
{
    uint64_t h = (size * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)region << 8 | api);
    h ^= h >> 31;
    for (unsigned i = 0; i < HSR_FAILED_SLOTS; i++) {
        struct slot *s = &slots[(h + i) % HSR_FAILED_SLOTS];
        if (!atomic_load_explicit(&s->ready, memory_order_acquire)) {
            s->region = region;
            s->api = api;
            s->size = size;
            atomic_store_explicit(&s->ready, 1, memory_order_release);
            return s;
        }
        if (s->region == region && s->api == api && s->size == size)
            return s;
    }
    return NULL;
}

void hsr_failed_note(unsigned api, uint64_t size, uint32_t region)
{
    if (api >= 16)
        return;
    while (atomic_exchange_explicit(&lock, 1, memory_order_acquire))
        ;
    struct slot *s = find(region, api, size);
    atomic_store(&used, 1);
    if (s) {
        atomic_fetch_add_explicit(&s->calls, 1, memory_order_relaxed);
    } else {
        atomic_store(&used_unsized, 1);
        atomic_fetch_add_explicit(&unsized[region < HSR_MAX_REGIONS ? region : 0][api], 1,
                                  memory_order_relaxed);
    }
    atomic_store_explicit(&lock, 0, memory_order_release);
}

void hsr_failed_visit(void *ctx, hsr_failed_fn fn)
{
    if (!atomic_load(&used))
        return;
    for (unsigned i = 0; i < HSR_FAILED_SLOTS; i++) {
        struct slot *s = &slots[i];
        if (!atomic_load_explicit(&s->ready, memory_order_acquire))
            continue;
        uint64_t n = atomic_load_explicit(&s->calls, memory_order_relaxed);
        if (n)
            fn(ctx, s->region, s->api, s->size, 1, n);
    }
    for (uint32_t r = 0; atomic_load(&used_unsized) && r < HSR_MAX_REGIONS; r++)
        for (unsigned a = 0; a < 16; a++) {
            uint64_t n = atomic_load_explicit(&unsized[r][a], memory_order_relaxed);
            if (n)
                fn(ctx, r, a, 0, 0, n);
        }
}

void hsr_failed_after_fork_child(void)
{
    if (atomic_load(&used)) /* (untouched, the pages stay unmapped) */
        memset(slots, 0, sizeof slots);
    if (atomic_load(&used_unsized))
        memset(unsized, 0, sizeof unsized);
    atomic_store(&used, 0);
    atomic_store(&used_unsized, 0);
    atomic_store(&lock, 0);
}
