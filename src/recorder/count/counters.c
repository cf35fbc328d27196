/*
 * counters.c — per-thread count tables: the hot path of the recorder.
 *
 * The increments themselves are inline, in counting.h.
 * Each thread's record (thread.h, threads.c) holds, per region id, a lazily
 * mapped block of API call counters plus a direct array of counts for sizes below
 * HSR_SMALL_SIZES, and one open-addressing hash table for (region, size) pairs
 * above. Only the owner writes its table (relaxed atomic load+store: a plain add,
 * yet race-free for the merging reader), so counting takes no lock and touches
 * no shared cache line.
 *
 * The hash table grows by copying into a table twice as large and publishing it
 * (release); the old one is kept, since a dump may still be reading it.
 */
#define _GNU_SOURCE
#include <string.h>

#include "core/pool.h"
#include "count/counting.h"
#include "count/regions.h"
#include "count/thread.h"
#include "stacks/stacks.h"

struct size_entry {
    _Atomic uint64_t size; /* 0 = empty (sizes here are >= HSR_SMALL_SIZES) */
    uint32_t region, pad;
    _Atomic uint64_t count;
};

struct hsr_size_table {
    uint64_t mask, used;
    struct size_entry e[];
};

struct hsr_region_counts *hsr_region_counts_new(struct hsr_thread *t, uint32_t r)
{
    struct hsr_region_counts *rc = hsr_map(sizeof *rc);
    if (rc)
        atomic_store_explicit(&t->regions[r], rc, memory_order_release);
    return rc;
}

int hsr_fast_refill(void)
{
    if ((hsr_place.any | (uint64_t)hsr_guard) != 0)
        return 0;
    hsr_guard = 1; /* attaching may allocate (pthread_setspecific) */
    struct hsr_thread *t = hsr_self ? hsr_self : hsr_thread_attach();
    uint32_t r = atomic_load_explicit(&hsr_process_region, memory_order_relaxed);
    struct hsr_region_counts *rc = NULL;
    if (t && !(rc = atomic_load_explicit(&t->regions[r], memory_order_relaxed)))
        rc = hsr_region_counts_new(t, r);
    hsr_guard = 0;
    if (!rc)
        return 0;
    hsr_tls.counts = rc;
    hsr_tls.counts_region = r;
    return 1;
}

static struct hsr_size_table *size_table_new(uint64_t slots)
{
    struct hsr_size_table *st = hsr_map(sizeof *st + slots * sizeof(struct size_entry));
    if (st)
        st->mask = slots - 1;
    return st;
}

static uint64_t hash_size(uint32_t region, uint64_t size)
{
    uint64_t h = (size ^ ((uint64_t)region << 40)) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

/* The entry for (region, size), created if needed; NULL when out of memory. */
static struct size_entry *slot_for(struct hsr_size_table *st, uint32_t region, uint64_t size)
{
    for (uint64_t i = hash_size(region, size);; i++) {
        struct size_entry *e = &st->e[i & st->mask];
        uint64_t s = atomic_load_explicit(&e->size, memory_order_relaxed);
        if (s == size && e->region == region)
            return e;
        if (s == 0) {
            e->region = region;
            atomic_store_explicit(&e->size, size, memory_order_release);
            st->used++;
            return e;
        }
    }
}

void hsr_count_large(struct hsr_thread *t, uint32_t region, uint64_t size)
{
    struct hsr_size_table *st = atomic_load_explicit(&t->large, memory_order_relaxed);
    if (!st || (st->used + 1) * 2 > st->mask + 1) {
        struct hsr_size_table *bigger = size_table_new(st ? (st->mask + 1) * 2 : 1024);
        if (!bigger)
            return; /* out of memory: nothing sane left to do */
        if (st)
            for (uint64_t i = 0; i <= st->mask; i++) {
                uint64_t s = atomic_load_explicit(&st->e[i].size, memory_order_relaxed);
                if (s) {
                    struct size_entry *e = slot_for(bigger, st->e[i].region, s);
                    atomic_store_explicit(&e->count, atomic_load(&st->e[i].count),
                                          memory_order_relaxed);
                }
            }
        atomic_store_explicit(&t->large, bigger, memory_order_release);
        st = bigger;
    }
    hsr_bump(&slot_for(st, region, size)->count, 1);
}

void hsr_thread_visit(struct hsr_thread *t, void *ctx, hsr_size_fn sizes, hsr_api_fn apis)
{
    uint32_t nregions = hsr_region_count();
    for (uint32_t r = 0; r < nregions; r++) {
        struct hsr_region_counts *rc = atomic_load_explicit(&t->regions[r], memory_order_acquire);
        if (!rc)
            continue;
        for (unsigned a = 0; a < HS_API_COUNT; a++) {
            uint64_t n = atomic_load_explicit(&rc->api[a], memory_order_relaxed);
            if (n)
                apis(ctx, r, a, n);
        }
        for (uint64_t s = 0; s < HSR_SMALL_SIZES; s++) {
            uint64_t n = atomic_load_explicit(&rc->small[s], memory_order_relaxed);
            if (n)
                sizes(ctx, r, s, n);
        }
    }
    struct hsr_size_table *st = atomic_load_explicit(&t->large, memory_order_acquire);
    for (uint64_t i = 0; st && i <= st->mask; i++) {
        uint64_t s = atomic_load_explicit(&st->e[i].size, memory_order_acquire);
        uint64_t n = s ? atomic_load_explicit(&st->e[i].count, memory_order_relaxed) : 0;
        if (n)
            sizes(ctx, st->e[i].region, s, n);
    }
}

/* In a forked child only the forking thread exists: the parent's counts are the
 * parent's, so every table is zeroed and all but ours handed back (threads.c). */
void hsr_counters_after_fork_child(void)
{
    for (struct hsr_thread *t = hsr_threads_first(); t; t = t->next) {
        for (uint32_t r = 0; r < HSR_MAX_REGIONS; r++) {
            struct hsr_region_counts *rc = t->regions[r];
            if (rc)
                memset(rc, 0, sizeof *rc);
        }
        struct hsr_size_table *st = t->large;
        if (st) {
            memset(st->e, 0, (st->mask + 1) * sizeof st->e[0]);
            st->used = 0;
        }
        if (t->stacks)
            hsr_stack_table_clear(t->stacks);
    }
    hsr_failed_after_fork_child();
    hsr_threads_after_fork_child();
}
