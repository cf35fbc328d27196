/*
 * wide.c — the wide side table's slow paths: a shard's growth, and the table around
 * fork. The layout and the hot paths are in wide.h.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>

#include "core/pool.h"
#include "track/tracking.h"
#include "track/wide.h"

struct hsr_shard hsr_shards[HSR_SHARDS];
_Atomic uint64_t hsr_wide_used;

void hsr_spin_wait(_Atomic int *l)
{
    for (int n = 0; atomic_exchange_explicit(l, 1, memory_order_acquire); n++)
        if (n > 64)
            sched_yield();
}

/* Called with the shard locked and half full (or empty): twice the slots. */
__attribute__((noinline, cold)) int hsr_shard_grow(struct hsr_shard *sh)
{
    uint64_t slots = sh->s ? (sh->mask + 1) * 2 : 1024;
    struct hsr_slot *s = hsr_map(slots * sizeof *s);
    if (!s)
        return -1;
    for (uint64_t i = 0; sh->s && i <= sh->mask; i++)
        if (sh->s[i].addr)
            for (uint64_t j = hsr_addr_hash(sh->s[i].addr);; j++)
                if (!s[j & (slots - 1)].addr) {
                    s[j & (slots - 1)] = sh->s[i];
                    break;
                }
    if (sh->s) {
        hsr_unmap(sh->s, (sh->mask + 1) * sizeof *s);
        atomic_fetch_sub(&hsr_track_table_bytes, (int64_t)((sh->mask + 1) * sizeof *s));
    }
    atomic_fetch_add(&hsr_track_table_bytes, (int64_t)(slots * sizeof *s));
    sh->s = s;
    sh->mask = slots - 1;
    sh->limit = slots / 2;
    return 0;
}

void hsr_wide_lock(void)
{
    for (unsigned i = 0; i < HSR_SHARDS; i++)
        hsr_spin_lock(&hsr_shards[i].lock);
}

void hsr_wide_unlock(void)
{
    for (unsigned i = 0; i < HSR_SHARDS; i++)
        hsr_spin_unlock(&hsr_shards[i].lock);
}

/* The child of a fork forgets the parent's blocks: their frees are not found. */
void hsr_wide_clear(void)
{
    for (unsigned i = 0; i < HSR_SHARDS; i++) {
        struct hsr_shard *sh = &hsr_shards[i];
        if (sh->s)
            memset(sh->s, 0, (sh->mask + 1) * sizeof *sh->s);
        sh->used = 0;
        hsr_spin_unlock(&sh->lock);
    }
    atomic_store(&hsr_wide_used, 0);
}
