/*
 * wide.h — the side table's wide part: blocks the compact table (table.h) cannot
 * encode, whole, 32 bytes a slot: a thread table past the compact slot's 12 bits, a
 * record past its 21, a window past the 2^20 the dictionary holds, a block born more
 * than about ten days after tracking started, an allocation number past 2^44 in its
 * thread. Normally empty (and then never looked at: hsr_wide_used).
 *
 * 64 shards chosen by a hash of the address's 1 MiB window, each an open-addressing
 * table (linear probing, deletion by backward shift, no tombstones; within a window
 * the slot follows the address) under its own spinlock, doubling when half full.
 * Everything is mmap'd, outside the program's heap.
 */
#ifndef HSR_TRACK_WIDE_H
#define HSR_TRACK_WIDE_H

#include "track/spin.h"
#include "track/tracking.h"

/* What the side table knows of a block (table.h's logical entry; the wide table's
 * slot as it is). */
struct hsr_slot {
    uint64_t addr; /* 0 = empty */
    uint64_t born; /* raw clock at birth (hsr_clock_raw) */
    uintptr_t rec; /* struct hsr_track_rec *, | 1 if allocated inside a component */
    uint64_t seq;  /* table index << HSR_SEQ_BITS | its allocation number */
};
#define HSR_SEQ_BITS 48
#define HSR_SEQ_MASK ((1ull << HSR_SEQ_BITS) - 1)

struct hsr_shard {
    _Atomic int lock;
    uint64_t mask, used;
    uint64_t limit; /* used >= limit: grow first (half the slots; 0 before the first) */
    struct hsr_slot *s;
} __attribute__((aligned(64)));

extern HSR_HIDDEN struct hsr_shard hsr_shards[HSR_SHARDS];
extern HSR_HIDDEN _Atomic uint64_t hsr_wide_used; /* blocks in it, all shards */

/* wide.c */
HSR_HIDDEN int hsr_shard_grow(struct hsr_shard *sh);
HSR_HIDDEN void hsr_wide_lock(void); /* every shard, around fork */
HSR_HIDDEN void hsr_wide_unlock(void);
HSR_HIDDEN void hsr_wide_clear(void); /* the child: empty, unlocked */

/* Nearby addresses get nearby slots, so that a program allocating or freeing in
 * address order walks the table in order (with 10^7 blocks a random slot is a cache
 * and TLB miss each): within a 1 MiB window of addresses the slot follows the address,
 * each window shifted by a hash of its number, which also picks the shard (the top 6
 * bits). */
static inline uint64_t hsr_addr_hash(uint64_t a)
{
    uint64_t w = (a >> 20) * 0x9E3779B97F4A7C15ull;
    w ^= w >> 29;
    return (w & 0xFC00000000000000ull) | (((a >> 4) + w) & 0x03FFFFFFFFFFFFFFull);
}

static inline struct hsr_shard *hsr_shard_of(uint64_t h) { return &hsr_shards[h >> 58]; }

/* Put a block in the wide table: 0, or 1 when a block at the same address was still
 * in it (a dead block whose death waits in a thread's deferred deaths, deferred.c):
 * that one is replaced, and copied to *replaced; -1 when out of memory.
 * h = hsr_addr_hash(in->addr). The bound on blocks is table.h's. */
static inline int hsr_wide_insert(uint64_t h, const struct hsr_slot *in, struct hsr_slot *replaced)
{
    struct hsr_shard *sh = hsr_shard_of(h);
    hsr_spin_lock(&sh->lock);
    if (HSR_UNLIKELY(sh->used >= sh->limit && hsr_shard_grow(sh))) {
        hsr_spin_unlock(&sh->lock);
        return -1;
    }
    struct hsr_slot *s = sh->s;
    uint64_t m = sh->mask, i = h & m;
    int found = 0;
    while (s[i].addr) {
        if (s[i].addr == in->addr) {
            *replaced = s[i];
            found = 1;
            break;
        }
        i = (i + 1) & m;
    }
    if (!found) {
        sh->used++;
        atomic_fetch_add_explicit(&hsr_wide_used, 1, memory_order_relaxed);
    }
    s[i] = *in;
    hsr_spin_unlock(&sh->lock);
    return found;
}

/* Set the birth clock of addr's block; 0 if it is here. */
static inline int hsr_wide_set_born(uint64_t h, uint64_t addr, uint64_t born)
{
    int found = 0;
    struct hsr_shard *sh = hsr_shard_of(h);
    hsr_spin_lock(&sh->lock);
    for (uint64_t m = sh->mask, i = h & m; sh->s && sh->s[i].addr; i = (i + 1) & m)
        if (sh->s[i].addr == addr) {
            sh->s[i].born = born;
            found = 1;
            break;
        }
    hsr_spin_unlock(&sh->lock);
    return found ? 0 : -1;
}

/* Take addr's slot out of the wide table into *out; 0 if found. h =
 * hsr_addr_hash(addr). Only a block born at or before raw clock `born_by`
 * (UINT64_MAX: any); with `try_only`, give up (-1) rather than wait for the lock. */
static inline int hsr_wide_remove(uint64_t h, uint64_t addr, uint64_t born_by, int try_only,
                                  struct hsr_slot *out)
{
    struct hsr_shard *sh = hsr_shard_of(h);
    if (HSR_UNLIKELY(try_only)) {
        if (!hsr_spin_trylock(&sh->lock))
            return -1;
    } else {
        hsr_spin_lock(&sh->lock);
    }
    struct hsr_slot *s = sh->s;
    if (HSR_UNLIKELY(!s)) {
        hsr_spin_unlock(&sh->lock);
        return -1;
    }
    uint64_t m = sh->mask, i = h & m;
    while (s[i].addr != addr) {
        if (!s[i].addr) {
            hsr_spin_unlock(&sh->lock);
            return -1;
        }
        i = (i + 1) & m;
    }
    if (HSR_UNLIKELY(s[i].born > born_by)) {
        hsr_spin_unlock(&sh->lock);
        return -1;
    }
    *out = s[i];
    /* backward shift: move later members of the probe run into the hole */
    for (uint64_t j = (i + 1) & m; s[j].addr; j = (j + 1) & m) {
        uint64_t home = hsr_addr_hash(s[j].addr) & m;
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            s[i] = s[j];
            i = j;
        }
    }
    s[i].addr = 0;
    sh->used--;
    atomic_fetch_sub_explicit(&hsr_wide_used, 1, memory_order_relaxed);
    hsr_spin_unlock(&sh->lock);
    return 0;
}

#endif
