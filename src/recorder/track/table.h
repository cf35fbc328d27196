/*
 * track_table.h — tracking mode's side table: address -> what tracking knows of
 * a live block (its record, birth time, allocating thread and allocation number).
 * Insert and remove are inline, for the allocation hooks; growth and the fork
 * handlers are in track_table.c.
 *
 * 64 shards chosen by address hash, each an open-addressing table (linear
 * probing, deletion by backward shift, no tombstones) under its own spinlock,
 * doubling when half full. 32 bytes a slot, so 64..128 bytes per live block.
 * At most hs_track.max_blocks blocks are in it; the hooks count the rest
 * `untracked`. Everything is mmap'd, outside the program's heap.
 * A freed block leaves the table a few frees later (tracking.c, deferred deaths):
 * its address may be in the table again before, as a new block's, so a removal
 * can ask for a block born before a time, and an insertion returns the dead block
 * it replaces.
 */
#ifndef HS_TRACK_TABLE_H
#define HS_TRACK_TABLE_H

#include <sched.h>

#include "tracking.h"

struct hs_slot {
    uint64_t addr;      /* 0 = empty */
    uint64_t born;      /* raw clock at birth (hs_clock_raw) */
    uintptr_t rec;      /* struct hs_track_rec *, | 1 if allocated inside a component */
    uint64_t seq;       /* table index << HS_SEQ_BITS | its allocation number */
};
#define HS_SEQ_BITS 48
#define HS_SEQ_MASK ((1ull << HS_SEQ_BITS) - 1)

#define HS_SHARDS 64u
struct hs_shard {
    _Atomic int lock;
    uint64_t mask, used;
    uint64_t limit;     /* used >= limit: grow first (half the slots; 0 before the first) */
    struct hs_slot *s;
} __attribute__((aligned(64)));

extern HS_HIDDEN struct hs_shard hs_shards[HS_SHARDS];
extern HS_HIDDEN struct hs_split hs_track_blocks;  /* blocks in the table */

/* track_table.c */
HS_HIDDEN int hs_shard_grow(struct hs_shard *sh);
HS_HIDDEN void hs_track_table_lock(void);     /* every shard, around fork */
HS_HIDDEN void hs_track_table_unlock(void);
HS_HIDDEN void hs_track_table_clear(void);    /* the child: empty, unlocked */

__attribute__((noinline, cold)) HS_HIDDEN void hs_spin_wait(_Atomic int *l);

static inline void hs_spin_lock(_Atomic int *l)
{
    if (HS_UNLIKELY(atomic_exchange_explicit(l, 1, memory_order_acquire)))
        hs_spin_wait(l);
}

static inline int hs_spin_trylock(_Atomic int *l)
{
    return !atomic_exchange_explicit(l, 1, memory_order_acquire);
}

static inline void hs_spin_unlock(_Atomic int *l)
{
    atomic_store_explicit(l, 0, memory_order_release);
}

static inline uint64_t hs_addr_hash(uint64_t a)
{
    uint64_t h = (a >> 4) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

static inline struct hs_shard *hs_shard_of(uint64_t h) { return &hs_shards[h >> 58]; }

/* Start fetching the slot of h (and the next, which a removal reads too). */
static inline void hs_slot_prefetch(uint64_t h)
{
    struct hs_shard *sh = hs_shard_of(h);
    if (HS_LIKELY(sh->s)) {
        __builtin_prefetch(&sh->s[h & sh->mask]);
        __builtin_prefetch(&sh->s[(h + 1) & sh->mask]);
    }
}

/* Put a block in the table: 0, or -1 when the table may not hold one more block
 * (hs_track.max_blocks; it still takes one that replaces a dead block), or 1 when
 * a block at the same address was still in it (a dead block whose
 * death waits in a thread's deferred deaths, tracking.c): that one is replaced,
 * and copied to *replaced. h = hs_addr_hash(in->addr); t: the calling thread's
 * table, or NULL. */
static inline int hs_slot_insert(const struct hs_thread *t, uint64_t h, const struct hs_slot *in,
                                 struct hs_slot *replaced)
{
    /* full: only a block replacing a dead one at its address gets in */
    int full = (uint64_t)hs_split_add(&hs_track_blocks, t, 1) > hs_track.max_blocks;
    struct hs_shard *sh = hs_shard_of(h);
    hs_spin_lock(&sh->lock);
    if (HS_UNLIKELY(full ? !sh->s : sh->used >= sh->limit && hs_shard_grow(sh))) {
        hs_spin_unlock(&sh->lock);
        hs_split_add(&hs_track_blocks, t, -1);
        return -1;
    }
    struct hs_slot *s = sh->s;
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
    if (HS_UNLIKELY(full && !found)) {
        hs_spin_unlock(&sh->lock);
        hs_split_add(&hs_track_blocks, t, -1);
        return -1;
    }
    sh->used += !found;
    s[i] = *in;
    hs_spin_unlock(&sh->lock);
    if (found)
        hs_split_add(&hs_track_blocks, t, -1);
    return found;
}

/* Set the birth clock of addr's block (a birth whose clock reading equals that
 * of the free its address came from, tracking.c). */
static inline void hs_slot_set_born(uint64_t h, uint64_t addr, uint64_t born)
{
    struct hs_shard *sh = hs_shard_of(h);
    hs_spin_lock(&sh->lock);
    for (uint64_t m = sh->mask, i = h & m; sh->s && sh->s[i].addr; i = (i + 1) & m)
        if (sh->s[i].addr == addr) {
            sh->s[i].born = born;
            break;
        }
    hs_spin_unlock(&sh->lock);
}

/* Take addr's slot out of the table into *out; 0 if found. h = hs_addr_hash(addr).
 * Only a block born at or before raw clock `born_by` (UINT64_MAX: any); with
 * `try_only`, give up (-1) rather than wait for the shard's lock. */
static inline int hs_slot_remove(const struct hs_thread *t, uint64_t h, uint64_t addr,
                                 uint64_t born_by, int try_only, struct hs_slot *out)
{
    struct hs_shard *sh = hs_shard_of(h);
    if (HS_UNLIKELY(try_only)) {
        if (!hs_spin_trylock(&sh->lock))
            return -1;
    } else {
        hs_spin_lock(&sh->lock);
    }
    struct hs_slot *s = sh->s;
    if (HS_UNLIKELY(!s)) {
        hs_spin_unlock(&sh->lock);
        return -1;
    }
    uint64_t m = sh->mask, i = h & m;
    while (s[i].addr != addr) {
        if (!s[i].addr) {
            hs_spin_unlock(&sh->lock);
            return -1;
        }
        i = (i + 1) & m;
    }
    if (HS_UNLIKELY(s[i].born > born_by)) {
        hs_spin_unlock(&sh->lock);
        return -1;
    }
    *out = s[i];
    /* backward shift: move later members of the probe run into the hole */
    for (uint64_t j = (i + 1) & m; s[j].addr; j = (j + 1) & m) {
        uint64_t home = hs_addr_hash(s[j].addr) & m;
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            s[i] = s[j];
            i = j;
        }
    }
    s[i].addr = 0;
    sh->used--;
    hs_spin_unlock(&sh->lock);
    hs_split_add(&hs_track_blocks, t, -1);
    return 0;
}

#endif
