/*
 * table.h — tracking mode's side table: address -> what tracking knows of a live block
 * (struct hsr_slot, wide.h: its record, birth clock, allocating table and allocation
 * number), 16 bytes a block in the compact table below; the few blocks it cannot
 * encode go whole to the wide table (wide.h). Insert and remove are inline, for the
 * allocation hooks; growth, the generations' sweep and the fork handlers are in
 * table.c.
 *
 * A compact slot, two words (w0 == 0: empty; record ids start at 1):
 *   w0  granule (16) | window id (20) << 16 | record id (21) << 36 | component << 57
 *       | birth clock's bits 32-37 << 58
 *   w1  table index (12) | allocation number's low 20 bits << 12 | clock's bits 0-31 << 32
 * The key is the address's 1 MiB window, by its id (windows.h), and its 16-byte granule
 * in it; the record is the block's record by id (records.c); the birth stamp (clock and
 * allocation number) is stamps.h's.
 *
 * 64 shards chosen by a hash of the key's window, each a bucketized cuckoo table under
 * its own spinlock: buckets of 4 slots (64 bytes, one cache line), any number of them;
 * a key lives in one of two buckets (hsr_buckets), so a lookup reads at most two lines
 * and a deletion only moves one slot. An insertion into two full buckets moves a block
 * of one to its other bucket, and so on (a random walk of at most HSR_CUCKOO_WALK
 * steps). A shard grows by a third when 9/10 full: from 16 / 0.9 to 16 / (0.9 * 3/4),
 * 17.8 to 23.7 bytes per live block. Its memory is in huge pages where the kernel
 * gives them (a random slot then misses the cache, not the TLB too), and a block's
 * buckets are fetched ahead: at its birth while its stamp is made, at its free a few
 * frees before its death is counted. At most hsr_track.max_blocks blocks are tracked;
 * the hooks count the rest `untracked`. Everything is mmap'd, outside the program's
 * heap.
 *
 * A freed block leaves the table a few frees later (deferred.c): its address may be
 * in the table again before, as a new block's, so a removal can ask for a block born
 * before a time, and an insertion returns the dead block it replaces.
 */
#ifndef HSR_TRACK_TABLE_H
#define HSR_TRACK_TABLE_H

#include "count/thread.h"
#include "track/spin.h"
#include "track/stamps.h"
#include "track/thread.h"
#include "track/tracking.h"
#include "track/wide.h"
#include "track/windows.h"

struct hsr_cslot {
    uint64_t w0, w1;
};
#define HSR_CS_KEY_MASK ((1ull << 36) - 1)
#define HSR_CS_TABLES (1u << 12)  /* tables a compact slot can name */
#define HSR_CS_RECORDS (1u << 21) /* records a compact slot can name */
#define HSR_CS_NO_KEY UINT64_MAX  /* an address the compact table cannot hold */

#define HSR_BUCKET 4u        /* slots a bucket: one cache line */
#define HSR_CUCKOO_WALK 500u /* moves an insertion may make before the shard grows */

struct hsr_table_shard {
    _Atomic int lock;
    uint32_t m;     /* buckets (0 before the first block) */
    uint32_t limit; /* used >= limit: grow first */
    uint32_t used;
    uint64_t walk; /* the cuckoo walk's random state */
    struct hsr_cslot *s;
} __attribute__((aligned(64)));

extern HSR_HIDDEN struct hsr_table_shard hsr_table_shards[HSR_SHARDS];
extern HSR_HIDDEN struct hsr_split hsr_track_blocks;          /* blocks in both tables */
extern HSR_HIDDEN struct hsr_track_rec **hsr_track_rec_by_id; /* records.c */

/* A 32-bit hash mapped onto 0..n-1 by one multiplication (Lemire's "fast range"):
 * as even as a modulo for a hash whose bits are all mixed, without the division. */
static inline uint32_t hsr_range(uint32_t hash, uint32_t n)
{
    return (uint32_t)(((uint64_t)hash * n) >> 32);
}

/* Where an address's block is, or goes: its key (HSR_CS_NO_KEY: not in the compact
 * table: a window the dictionary does not hold, or an address not on a 16-byte
 * boundary), its shard and its two bucket hashes (hsr_buckets). */
struct hsr_where {
    struct hsr_table_shard *sh;
    uint64_t key;
    uint32_t h1, h2;
    uint64_t addr; /* the address (0: known by its key only) */
};

/* A key's hashes. The first is its window's: the shard (top 6 bits; a window's blocks
 * are in one shard) and where the window's first bucket is (h1). The second is the
 * key's own (h2): its other bucket, anywhere. */
static inline void hsr_key_hashes(uint64_t key, uint32_t *h1, uint32_t *h2, unsigned *shard)
{
    uint64_t a = (key >> 16) * 0x9E3779B97F4A7C15ull, b = key * 0xC2B2AE3D27D4EB4Full;
    a ^= a >> 31;
    *shard = (unsigned)(a >> 58);
    *h1 = (uint32_t)(a >> 26);
    *h2 = (uint32_t)(b >> 32);
}

static inline void hsr_where_key(uint64_t key, struct hsr_where *w)
{
    unsigned shard;
    hsr_key_hashes(key, &w->h1, &w->h2, &shard);
    w->key = key;
    w->sh = &hsr_table_shards[shard];
    w->addr = 0;
}

/* A key's two buckets (distinct when the shard has more than one). The first follows
 * the address: four granules a bucket from the window's first, so that a program
 * allocating or freeing in address order walks the table in order (a random bucket
 * per block missed the cache at every one, with 10^6 blocks and more); the second is
 * a random one of the 64 buckets (a 4 KiB page) around it, for the blocks the first
 * cannot hold: a walk and a second look miss the cache, not the TLB too (anywhere in
 * the shard, the AMR-like patch-alloc with 4 M live blocks took 2.23x its plain run
 * instead of 1.95x). */
static inline void hsr_buckets(const struct hsr_table_shard *sh, uint64_t key, uint32_t h1,
                               uint32_t h2, uint32_t *b1, uint32_t *b2)
{
    uint32_t m = sh->m, local = (uint32_t)(key & 0xFFFF) / HSR_BUCKET;
    if (HSR_LIKELY(m > 0x10000 / HSR_BUCKET)) {
        *b1 = hsr_range(h1, m) + local;
        if (*b1 >= m)
            *b1 -= m;
    } else { /* a shard smaller than a window's buckets is in cache anyway: hashed */
        *b1 = hsr_range(h1 ^ (local * 0x9E3779B9u), m);
    }
    /* the second in the first's page (64 buckets): a walk and a lookup miss no TLB */
    uint32_t base = *b1 & ~63u;
    *b2 = base + (h2 & 63u);
    if (HSR_UNLIKELY(base + 64 > m))
        *b2 = hsr_range(h2, m);
    if (*b2 == *b1 && ++*b2 == m)
        *b2 = 0;
}

/* table.c: a window not in the calling thread's memo (ts, or NULL: none) looked up in the
 * dictionary (and, with add, given an id if new: a birth), its id and hashes put in the
 * memo and in *w (sh, h1); 0 if it has no id (w unchanged). */
HSR_HIDDEN int hsr_where_window(uint64_t window, struct hsr_track_thread *ts, int add,
                                struct hsr_where *w, uint32_t *id);

/* Where address a's block is, or goes. ts: the calling thread's tracking state, whose
 * memo of windows (thread.h) gives the key's window id and hashes without the
 * dictionary (NULL: none); add: a window never seen gets an id (a birth), else not (a
 * removal). */
static inline void hsr_where_of(uint64_t a, struct hsr_track_thread *ts, int add,
                                struct hsr_where *w)
{
    w->key = HSR_CS_NO_KEY;
    w->sh = NULL;
    if (HSR_UNLIKELY(a & 15))
        return;
    uint64_t window = a >> HSR_WINDOW_SHIFT;
    uint32_t id;
    const struct hsr_window_memo *m = ts ? &ts->windows[window % HSR_WINDOW_MEMO] : NULL;
    if (HSR_LIKELY(m && m->window == window + 1)) {
        id = m->id & (HSR_WINDOWS - 1);
        w->sh = &hsr_table_shards[m->id >> 20];
        w->h1 = m->h1;
    } else if (!hsr_where_window(window, ts, add, w, &id)) {
        return;
    }
    uint64_t key = (uint64_t)id << 16 | ((a >> 4) & 0xFFFF);
    w->key = key;
    w->h2 = (uint32_t)((key * 0xC2B2AE3D27D4EB4Full) >> 32); /* hsr_key_hashes' */
    w->addr = a;
}

/* The slot of a block that can be compact: OK, ADVANCE or WIDE (stamps.h). */
static inline int hsr_cslot_pack(uint64_t key, const struct hsr_slot *in, uint64_t gen,
                                 struct hsr_cslot *c)
{
    const struct hsr_track_rec *r = (const struct hsr_track_rec *)(in->rec & ~(uintptr_t)1);
    uint64_t tid = in->seq >> HSR_SEQ_BITS, number = in->seq & HSR_SEQ_MASK, clock;
    if (HSR_UNLIKELY(!r->id || r->id >= HSR_CS_RECORDS || tid >= HSR_CS_TABLES ||
                     number >> (HSR_STAMP_SEQ_BITS + 24)))
        return HSR_STAMP_WIDE;
    int stamp = hsr_stamp_clock(in->born, gen, &clock);
    if (HSR_UNLIKELY(stamp != HSR_STAMP_OK))
        return stamp;
    c->w0 = key | (uint64_t)r->id << 36 | (uint64_t)(in->rec & 1) << 57 | (clock >> 32) << 58;
    c->w1 = tid | (number & ((1u << HSR_STAMP_SEQ_BITS) - 1)) << 12 | clock << 32;
    return HSR_STAMP_OK;
}

static inline uint64_t hsr_cslot_clock(const struct hsr_cslot *c)
{
    return (c->w0 >> 58) << 32 | c->w1 >> 32;
}

/* table.c: the whole entry of a compact slot at address addr (0: found from its key),
 * its birth clock [born, born + span) read (under the shard's lock, with the generation
 * then current) */
HSR_HIDDEN void hsr_cslot_unpack(const struct hsr_cslot *c, uint64_t addr, uint64_t born,
                                 uint64_t span, struct hsr_slot *out);

/* The slot of key in buckets b1, b2: its index, or -1; *free: a free slot there, in
 * the emptier bucket (the buckets stay even, and walks rare), or -1. A bucket's
 * entries are packed at its front (a deletion moves its last one into the hole), so
 * a scan stops at the first free slot. */
static inline int64_t hsr_bucket_find(const struct hsr_cslot *s, uint64_t key, uint32_t b1,
                                      uint32_t b2, int64_t *free)
{
    const struct hsr_cslot *p = &s[(uint64_t)b1 * HSR_BUCKET], *q = &s[(uint64_t)b2 * HSR_BUCKET];
    unsigned n1 = 0, n2 = 0;
    for (; n1 < HSR_BUCKET && p[n1].w0; n1++)
        if ((p[n1].w0 & HSR_CS_KEY_MASK) == key)
            return (int64_t)((uint64_t)b1 * HSR_BUCKET + n1);
    for (; n2 < HSR_BUCKET && q[n2].w0; n2++)
        if ((q[n2].w0 & HSR_CS_KEY_MASK) == key)
            return (int64_t)((uint64_t)b2 * HSR_BUCKET + n2);
    if (n1 == HSR_BUCKET && n2 == HSR_BUCKET)
        *free = -1;
    else
        *free =
            (int64_t)(n2 < n1 ? (uint64_t)b2 * HSR_BUCKET + n2 : (uint64_t)b1 * HSR_BUCKET + n1);
    return -1;
}

/* table.c, under the shard's lock: grow it (0, or -1: no memory); put a new entry
 * when both its buckets are full, by a cuckoo walk, growing the shard if the walk
 * finds no room (0, or -1: no memory, nothing changed) */
HSR_HIDDEN int hsr_table_grow(struct hsr_table_shard *sh);
HSR_HIDDEN int hsr_table_walk(struct hsr_table_shard *sh, const struct hsr_cslot *c);

/* The compact table alone, the common case: 0 put, 1 put in the place of a dead block
 * at its address (copied to *replaced), -2 not here (table.c's slow path decides: a
 * new generation, the wide table, a full table, no memory). */
static inline int hsr_table_put(const struct hsr_where *w, const struct hsr_slot *in,
                                struct hsr_slot *replaced)
{
    struct hsr_table_shard *sh = w->sh;
    hsr_spin_lock(&sh->lock);
    uint64_t gen = atomic_load_explicit(&hsr_gen, memory_order_acquire);
    struct hsr_cslot c;
    /* a dead block at this address might be in the wide table: the slow path looks */
    if (HSR_UNLIKELY(atomic_load_explicit(&hsr_wide_used, memory_order_relaxed)) ||
        HSR_UNLIKELY(hsr_cslot_pack(w->key, in, gen, &c) != HSR_STAMP_OK) ||
        HSR_UNLIKELY(sh->used >= sh->limit && hsr_table_grow(sh))) {
        hsr_spin_unlock(&sh->lock);
        return -2;
    }
    uint32_t b1, b2;
    hsr_buckets(sh, w->key, w->h1, w->h2, &b1, &b2);
    int64_t free, at = hsr_bucket_find(sh->s, w->key, b1, b2, &free);
    struct hsr_cslot old;
    uint64_t born = 0, span = 0;
    int found = at >= 0;
    if (found) {
        old = sh->s[at];
        born = hsr_stamp_born(hsr_cslot_clock(&old), gen, &span);
        sh->s[at] = c;
    } else if (HSR_LIKELY(free >= 0)) {
        sh->s[free] = c;
        sh->used++;
    } else if (hsr_table_walk(sh, &c) == 0) { /* both buckets full */
        sh->used++;
    } else {
        hsr_spin_unlock(&sh->lock);
        return -2;
    }
    hsr_spin_unlock(&sh->lock);
    if (found)
        hsr_cslot_unpack(&old, in->addr, born, span, replaced);
    return found;
}

/* table.c: every other case of an insertion (hsr_slot_insert's results) */
HSR_HIDDEN int hsr_slot_insert_slow(const struct hsr_where *w, const struct hsr_slot *in,
                                    struct hsr_slot *replaced, int full, int compact);

/* Put a block in the table: 0, or -1 when the table may not hold one more block
 * (hsr_track.max_blocks; it still takes one that replaces a dead block), or 1 when a
 * block at the same address was still in it (a dead block whose death waits in a
 * thread's deferred deaths, deferred.c): that one is replaced, and copied to
 * *replaced; 2: that too, but the new block could not be put (out of memory).
 * t, ts: the calling thread's table and tracking state; compact: 0 when the block
 * must go to the wide table (its table's epochs are lost, stamps.h). */
static inline int hsr_slot_insert(const struct hsr_thread *t, struct hsr_track_thread *ts,
                                  const struct hsr_slot *in, struct hsr_slot *replaced, int compact)
{
    int full = (uint64_t)hsr_split_add(&hsr_track_blocks, t, 1) > hsr_track.max_blocks;
    struct hsr_where w;
    hsr_where_of(in->addr, ts, 1, &w);
    int put = -2;
    if (HSR_LIKELY(!full && compact && w.key != HSR_CS_NO_KEY))
        put = hsr_table_put(&w, in, replaced);
    if (HSR_UNLIKELY(put == -2))
        put = hsr_slot_insert_slow(&w, in, replaced, full, compact);
    if (put != 0) /* one block replaced another, or went untracked (and a dead one out: 2) */
        hsr_split_add(&hsr_track_blocks, t, put == 2 ? -2 : -1);
    return put;
}

/* table.c: the compact table's part of a removal: 0 taken, -1 not there, -3 its
 * shard was locked and try_only */
HSR_HIDDEN int hsr_table_take(const struct hsr_where *w, uint64_t born_by, int try_only,
                              struct hsr_slot *out);

/* Take addr's block out of the table into *out; 0 if found. Only a block born at or
 * before raw clock `born_by` (UINT64_MAX: any); with `try_only`, give up (-1) rather
 * than wait for a shard's lock. t: the calling thread's table, or NULL (a signal
 * handler's snapshot). */
static inline int hsr_slot_remove(const struct hsr_thread *t, uint64_t addr, uint64_t born_by,
                                  int try_only, struct hsr_slot *out)
{
    struct hsr_where w;
    hsr_where_of(addr, t ? hsr_track_thread_peek(t) : NULL, 0, &w);
    int took = -1;
    if (HSR_LIKELY(w.key != HSR_CS_NO_KEY))
        took = hsr_table_take(&w, born_by, try_only, out);
    if (took == -1 && HSR_UNLIKELY(atomic_load_explicit(&hsr_wide_used, memory_order_relaxed)))
        took = hsr_wide_remove(hsr_addr_hash(addr), addr, born_by, try_only, out);
    if (took)
        return -1;
    hsr_split_add(&hsr_track_blocks, t, -1);
    return 0;
}

/* Start fetching the buckets of addr's block. */
static inline void hsr_slot_prefetch(const struct hsr_thread *t, uint64_t addr)
{
    struct hsr_where w;
    hsr_where_of(addr, t ? hsr_track_thread_peek(t) : NULL, 0, &w);
    if (w.key == HSR_CS_NO_KEY)
        return;
    struct hsr_table_shard *sh = w.sh;
    struct hsr_cslot *s = sh->s; /* racy (a growth): a prefetch never faults */
    uint32_t m = sh->m, b1, b2;
    if (HSR_LIKELY(s && m)) {
        hsr_buckets(sh, w.key, w.h1, w.h2, &b1, &b2);
        __builtin_prefetch(&s[(uint64_t)(b1 < m ? b1 : 0) * HSR_BUCKET]);
        __builtin_prefetch(&s[(uint64_t)(b2 < m ? b2 : 0) * HSR_BUCKET]);
    }
}

/* table.c */
/* Set the birth clock of addr's block (a birth whose clock reading equals that of the
 * free its address came from, deferred.c). */
HSR_HIDDEN void hsr_slot_set_born(const struct hsr_thread *t, uint64_t addr, uint64_t born);
HSR_HIDDEN int hsr_table_init(void); /* windows, generations; -1: no memory */
/* A new generation (stamps.h): the blocks of the one four back made old first. */
HSR_HIDDEN void hsr_gen_advance(uint64_t now);
HSR_HIDDEN void hsr_track_table_lock(void); /* every shard of both tables, around fork */
HSR_HIDDEN void hsr_track_table_unlock(void);
HSR_HIDDEN void hsr_track_table_clear(void); /* the child: empty, unlocked */

#endif
