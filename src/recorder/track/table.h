/*
 * table.h — tracking mode's side table: address -> what tracking knows of
 * a live block (its record, birth time, allocating thread and allocation number).
 * Insert and remove are inline, for the allocation hooks; growth and the fork
 * handlers are in table.c.
 *
 * 64 shards chosen by a hash of the address's 1 MiB window, each an
 * open-addressing table (linear probing, deletion by backward shift, no
 * tombstones; within a window the slot follows the address) under its own spinlock,
 * doubling when half full. 32 bytes a slot, so 64..128 bytes per live block.
 * At most hsr_track.max_blocks blocks are in it; the hooks count the rest
 * `untracked`. Everything is mmap'd, outside the program's heap.
 * A freed block leaves the table a few frees later (deferred.c):
 * its address may be in the table again before, as a new block's, so a removal
 * can ask for a block born before a time, and an insertion returns the dead block
 * it replaces.
 */
#ifndef HSR_TRACK_TABLE_H
#define HSR_TRACK_TABLE_H

#include <sched.h>

#include "track/tracking.h"

struct hsr_slot {
    uint64_t addr; /* 0 = empty */
    uint64_t born; /* raw clock at birth (hsr_clock_raw) */
    uintptr_t rec; /* struct hsr_track_rec *, | 1 if allocated inside a component */
    uint64_t seq;  /* table index << HSR_SEQ_BITS | its allocation number */
};
#define HSR_SEQ_BITS 48
#define HSR_SEQ_MASK ((1ull << HSR_SEQ_BITS) - 1)

#define HSR_SHARDS 64u
struct hsr_shard {
    _Atomic int lock;
    uint64_t mask, used;
    uint64_t limit; /* used >= limit: grow first (half the slots; 0 before the first) */
    struct hsr_slot *s;
} __attribute__((aligned(64)));

extern HSR_HIDDEN struct hsr_shard hsr_shards[HSR_SHARDS];
extern HSR_HIDDEN struct hsr_split hsr_track_blocks; /* blocks in the table */

/* table.c */
HSR_HIDDEN int hsr_shard_grow(struct hsr_shard *sh);
HSR_HIDDEN void hsr_track_table_lock(void); /* every shard, around fork */
HSR_HIDDEN void hsr_track_table_unlock(void);
HSR_HIDDEN void hsr_track_table_clear(void); /* the child: empty, unlocked */

__attribute__((noinline, cold)) HSR_HIDDEN void hsr_spin_wait(_Atomic int *l);

static inline void hsr_spin_lock(_Atomic int *l)
{
    if (HSR_UNLIKELY(atomic_exchange_explicit(l, 1, memory_order_acquire)))
        hsr_spin_wait(l);
}

static inline int hsr_spin_trylock(_Atomic int *l)
{
    return !atomic_exchange_explicit(l, 1, memory_order_acquire);
}

static inline void hsr_spin_unlock(_Atomic int *l)
{
    atomic_store_explicit(l, 0, memory_order_release);
}

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

/* Start fetching the slot of h (and the next, which a removal reads too). */
static inline void hsr_slot_prefetch(uint64_t h)
{
    struct hsr_shard *sh = hsr_shard_of(h);
    if (HSR_LIKELY(sh->s)) {
        __builtin_prefetch(&sh->s[h & sh->mask]);
        __builtin_prefetch(&sh->s[(h + 1) & sh->mask]);
    }
}

/* Put a block in the table: 0, or -1 when the table may not hold one more block
 * (hsr_track.max_blocks; it still takes one that replaces a dead block), or 1 when
 * a block at the same address was still in it (a dead block whose
 * death waits in a thread's deferred deaths, deferred.c): that one is replaced,
 * and copied to *replaced. h = hsr_addr_hash(in->addr); t: the calling thread's
 * table, or NULL. */
static inline int hsr_slot_insert(const struct hsr_thread *t, uint64_t h, const struct hsr_slot *in,
                                  struct hsr_slot *replaced)
{
    /* full: only a block replacing a dead one at its address gets in */
    int full = (uint64_t)hsr_split_add(&hsr_track_blocks, t, 1) > hsr_track.max_blocks;
    struct hsr_shard *sh = hsr_shard_of(h);
    hsr_spin_lock(&sh->lock);
    if (HSR_UNLIKELY(full ? !sh->s : sh->used >= sh->limit && hsr_shard_grow(sh))) {
        hsr_spin_unlock(&sh->lock);
        hsr_split_add(&hsr_track_blocks, t, -1);
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
    if (HSR_UNLIKELY(full && !found)) {
        hsr_spin_unlock(&sh->lock);
        hsr_split_add(&hsr_track_blocks, t, -1);
        return -1;
    }
    sh->used += !found;
    s[i] = *in;
    hsr_spin_unlock(&sh->lock);
    if (found)
        hsr_split_add(&hsr_track_blocks, t, -1);
    return found;
}

/* Set the birth clock of addr's block (a birth whose clock reading equals that
 * of the free its address came from, deferred.c). */
static inline void hsr_slot_set_born(uint64_t h, uint64_t addr, uint64_t born)
{
    struct hsr_shard *sh = hsr_shard_of(h);
    hsr_spin_lock(&sh->lock);
    for (uint64_t m = sh->mask, i = h & m; sh->s && sh->s[i].addr; i = (i + 1) & m)
        if (sh->s[i].addr == addr) {
            sh->s[i].born = born;
            break;
        }
    hsr_spin_unlock(&sh->lock);
}

/* Take addr's slot out of the table into *out; 0 if found. h = hsr_addr_hash(addr).
 * Only a block born at or before raw clock `born_by` (UINT64_MAX: any); with
 * `try_only`, give up (-1) rather than wait for the shard's lock. */
static inline int hsr_slot_remove(const struct hsr_thread *t, uint64_t h, uint64_t addr,
                                  uint64_t born_by, int try_only, struct hsr_slot *out)
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
    hsr_spin_unlock(&sh->lock);
    hsr_split_add(&hsr_track_blocks, t, -1);
    return 0;
}

#endif
