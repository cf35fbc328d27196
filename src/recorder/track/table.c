/*
 * table.c — the side table's slow paths (table.h): a shard's growth, an insertion
 * the compact table cannot take at once, a removal, the generations' sweep, and both
 * tables around fork.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "core/pool.h"
#include "core/tls.h"
#include "count/thread.h"
#include "track/table.h"
#include "track/tracking.h"

struct hsr_table_shard hsr_table_shards[HSR_SHARDS];
struct hsr_split hsr_track_blocks;
_Atomic int64_t hsr_track_table_bytes;
static _Atomic int advancing; /* one generation begun at a time */

int hsr_table_init(void) { return hsr_windows_init() || hsr_stamps_init() ? -1 : 0; }

/* The address of a compact slot's block. */
static uint64_t cslot_addr(const struct hsr_cslot *c)
{
    uint64_t key = c->w0 & HSR_CS_KEY_MASK;
    return hsr_window_of(key >> 16) << HSR_WINDOW_SHIFT | (key & 0xFFFF) << 4;
}

void hsr_cslot_unpack(const struct hsr_cslot *c, uint64_t addr, uint64_t born, uint64_t span,
                      struct hsr_slot *out)
{
    uint64_t tid = c->w1 & (HSR_CS_TABLES - 1);
    uint64_t low = (c->w1 >> 12) & ((1u << HSR_STAMP_SEQ_BITS) - 1);
    /* the block's allocating table: the calling thread's, most often */
    const struct hsr_thread *owner = hsr_self;
    if (!owner || owner->index != tid)
        owner = hsr_thread_at((uint32_t)tid);
    const struct hsr_track_thread *ots = owner ? hsr_track_thread_peek(owner) : NULL;
    out->addr = addr ? addr : cslot_addr(c);
    out->born = born;
    out->rec = (uintptr_t)hsr_track_rec_by_id[(c->w0 >> 36) & (HSR_CS_RECORDS - 1)] |
               (uintptr_t)((c->w0 >> 57) & 1);
    /* in its first epoch (no epoch logged), the low bits are the number */
    if (ots && atomic_load_explicit(&ots->epochs, memory_order_acquire))
        low = hsr_stamp_seq(ots, low, born, span);
    out->seq = tid << HSR_SEQ_BITS | low;
}

int hsr_where_window(uint64_t window, struct hsr_track_thread *ts, int add, struct hsr_where *w,
                     uint32_t *id)
{
    int64_t found = add ? hsr_window_add(window) : hsr_window_find(window);
    if (found < 0)
        return 0;
    uint32_t h2;
    unsigned shard;
    hsr_key_hashes((uint64_t)found << 16, &w->h1, &h2, &shard);
    w->sh = &hsr_table_shards[shard];
    *id = (uint32_t)found;
    if (ts) {
        struct hsr_window_memo *m = &ts->windows[window % HSR_WINDOW_MEMO];
        m->window = window + 1;
        m->id = (uint32_t)found | shard << 20;
        m->h1 = w->h1;
    }
    return 1;
}

/* The slot of key in the shard, or -1. */
static int64_t find(const struct hsr_table_shard *sh, const struct hsr_where *w)
{
    if (!sh->m)
        return -1;
    uint32_t b1, b2;
    int64_t free;
    hsr_buckets(sh, w->key, w->h1, w->h2, &b1, &b2);
    return hsr_bucket_find(sh->s, w->key, b1, b2, &free);
}

/* Slot i emptied, its bucket kept packed: the bucket's last entry moves into it. */
static void delete_at(struct hsr_table_shard *sh, uint64_t i)
{
    uint64_t last = i | (HSR_BUCKET - 1);
    while (!sh->s[last].w0)
        last--;
    sh->s[i] = sh->s[last];
    sh->s[last].w0 = sh->s[last].w1 = 0;
    sh->used--;
}

/* Put c in one of its buckets, moving others to their other bucket as need be (a
 * random walk); 0, or -1 when the walk found no room: then *c is the entry left
 * out (c's or one it moved). */
static int cuckoo_put(struct hsr_table_shard *sh, struct hsr_cslot *c)
{
    for (unsigned step = 0; step <= HSR_CUCKOO_WALK; step++) {
        uint32_t h1, h2, b1, b2;
        unsigned shard;
        hsr_key_hashes(c->w0 & HSR_CS_KEY_MASK, &h1, &h2, &shard);
        hsr_buckets(sh, c->w0 & HSR_CS_KEY_MASK, h1, h2, &b1, &b2);
        for (unsigned k = 0; k < 2; k++) {
            uint64_t at = (uint64_t)(k ? b2 : b1) * HSR_BUCKET;
            for (unsigned j = 0; j < HSR_BUCKET; j++)
                if (!sh->s[at + j].w0) {
                    sh->s[at + j] = *c;
                    return 0;
                }
        }
        /* both full: a random one of their entries moves out for c, and looks for
         * room of its own next */
        sh->walk ^= sh->walk << 13;
        sh->walk ^= sh->walk >> 7;
        sh->walk ^= sh->walk << 17;
        uint64_t victim =
            (uint64_t)(sh->walk & 1 ? b2 : b1) * HSR_BUCKET + (sh->walk >> 32) % HSR_BUCKET;
        struct hsr_cslot out = sh->s[victim];
        sh->s[victim] = *c;
        *c = out;
    }
    return -1;
}

/* A third more buckets (the first: HSR_TABLE_FIRST slots), under the shard's lock;
 * extra: an entry to put too (a walk's leftover), or NULL. */
__attribute__((noinline, cold)) static int grow(struct hsr_table_shard *sh,
                                                const struct hsr_cslot *extra)
{
    uint64_t m = sh->m ? sh->m + sh->m / 3 : HSR_TABLE_FIRST / HSR_BUCKET;
    for (;; m += m / 8 + 1) { /* a walk that fails even so: more room still */
        if (m * HSR_BUCKET >= UINT32_MAX / 2)
            return -1;
        size_t bytes = m * HSR_BUCKET * sizeof(struct hsr_cslot);
        struct hsr_cslot *s = hsr_map(bytes);
        if (!s)
            return -1;
        if (bytes >= (2u << 20))
            madvise(s, bytes, MADV_HUGEPAGE); /* a random slot: no TLB miss too */
        struct hsr_table_shard bigger = {.m = (uint32_t)m, .walk = sh->walk | 1, .s = s};
        int lost = 0;
        for (uint64_t i = 0; !lost && i < (uint64_t)sh->m * HSR_BUCKET; i++) {
            if (!sh->s[i].w0)
                continue;
            /* the first bucket nearly always has room (the table is 2/3 full): a walk
             * only when it has none */
            uint32_t h1, h2, b1, b2;
            unsigned shard;
            uint64_t key = sh->s[i].w0 & HSR_CS_KEY_MASK;
            hsr_key_hashes(key, &h1, &h2, &shard);
            hsr_buckets(&bigger, key, h1, h2, &b1, &b2);
            struct hsr_cslot *b = &s[(uint64_t)b1 * HSR_BUCKET];
            unsigned j = 0;
            while (j < HSR_BUCKET && b[j].w0)
                j++;
            if (j < HSR_BUCKET) {
                b[j] = sh->s[i];
            } else {
                struct hsr_cslot c = sh->s[i];
                lost = cuckoo_put(&bigger, &c);
            }
        }
        if (!lost && extra) {
            struct hsr_cslot c = *extra;
            lost = cuckoo_put(&bigger, &c);
        }
        if (lost) {
            hsr_unmap(s, bytes);
            continue;
        }
        if (sh->s) {
            size_t old = (size_t)sh->m * HSR_BUCKET * sizeof *s;
            hsr_unmap(sh->s, old);
            atomic_fetch_sub(&hsr_track_table_bytes, (int64_t)old);
        }
        atomic_fetch_add(&hsr_track_table_bytes, (int64_t)bytes);
        sh->s = s;
        sh->walk = bigger.walk;
        sh->limit = (uint32_t)(m * HSR_BUCKET * 9 / 10);
        __atomic_store_n(&sh->m, (uint32_t)m, __ATOMIC_RELEASE);
        return 0;
    }
}

int hsr_table_grow(struct hsr_table_shard *sh) { return grow(sh, NULL); }

int hsr_table_walk(struct hsr_table_shard *sh, const struct hsr_cslot *c)
{
    struct hsr_cslot left = *c;
    if (cuckoo_put(sh, &left) && grow(sh, &left)) {
        /* no memory for a bigger shard: the walk's leftover, another block, takes back
         * the slot the new entry got (the caller puts the new one elsewhere) */
        struct hsr_where w;
        hsr_where_key(c->w0 & HSR_CS_KEY_MASK, &w);
        sh->s[find(sh, &w)] = left;
        return -1;
    }
    return 0;
}

/* Put c (a new entry) in the shard, growing it when need be; 0, or -1 (no memory). */
static int put_new(struct hsr_table_shard *sh, const struct hsr_cslot *c, int may_grow)
{
    if (sh->used >= sh->limit && (!may_grow || grow(sh, NULL)))
        return -1;
    if (hsr_table_walk(sh, c))
        return -1;
    sh->used++;
    return 0;
}

int hsr_table_take(const struct hsr_where *w, uint64_t born_by, int try_only, struct hsr_slot *out)
{
    struct hsr_table_shard *sh = w->sh;
    if (HSR_UNLIKELY(try_only)) {
        if (!hsr_spin_trylock(&sh->lock))
            return -3;
    } else {
        hsr_spin_lock(&sh->lock);
    }
    int64_t at = find(sh, w);
    if (at < 0) {
        hsr_spin_unlock(&sh->lock);
        return -1;
    }
    struct hsr_cslot c = sh->s[at];
    uint64_t span, gen = atomic_load_explicit(&hsr_gen, memory_order_acquire);
    uint64_t born = hsr_stamp_born(hsr_cslot_clock(&c), gen, &span);
    if (HSR_UNLIKELY(born > born_by)) { /* a newer block at the address */
        hsr_spin_unlock(&sh->lock);
        return -1;
    }
    delete_at(sh, (uint64_t)at);
    hsr_spin_unlock(&sh->lock);
    hsr_cslot_unpack(&c, w->addr, born, span, out);
    return 0;
}

/* Any block at w's address out of both tables, into *out; 1 if there was one. */
static int take_any(const struct hsr_where *w, uint64_t addr, struct hsr_slot *out)
{
    if (w->key != HSR_CS_NO_KEY && hsr_table_take(w, UINT64_MAX, 0, out) == 0)
        return 1;
    return atomic_load_explicit(&hsr_wide_used, memory_order_relaxed) &&
           hsr_wide_remove(hsr_addr_hash(addr), addr, UINT64_MAX, 0, out) == 0;
}

int hsr_slot_insert_slow(const struct hsr_where *w, const struct hsr_slot *in,
                         struct hsr_slot *replaced, int full, int compact)
{
    /* the address's dead block first (at most one: the allocator gave the address to
     * one block at a time), so that the new one can go to either table */
    int found = take_any(w, in->addr, replaced);
    if (full && !found)
        return -1;
    int put = -1;
    struct hsr_table_shard *sh = w->sh;
    while (compact && w->key != HSR_CS_NO_KEY) {
        hsr_spin_lock(&sh->lock);
        uint64_t gen = atomic_load_explicit(&hsr_gen, memory_order_acquire);
        struct hsr_cslot c;
        int stamp = hsr_cslot_pack(w->key, in, gen, &c);
        if (stamp == HSR_STAMP_ADVANCE) {
            hsr_spin_unlock(&sh->lock);
            hsr_gen_advance(in->born);
            continue;
        }
        if (stamp == HSR_STAMP_OK && put_new(sh, &c, !full) == 0)
            put = 0;
        hsr_spin_unlock(&sh->lock);
        break;
    }
    if (put < 0) { /* the wide table: a block the compact slot cannot hold, or no room */
        struct hsr_slot other;
        put = hsr_wide_insert(hsr_addr_hash(in->addr), in, &other);
    }
    if (put < 0)
        return found ? 2 : -1;
    return found;
}

void hsr_slot_set_born(const struct hsr_thread *t, uint64_t addr, uint64_t born)
{
    struct hsr_where w;
    hsr_where_of(addr, t ? hsr_track_thread_peek(t) : NULL, 0, &w);
    if (w.key != HSR_CS_NO_KEY) {
        struct hsr_table_shard *sh = w.sh;
        hsr_spin_lock(&sh->lock);
        int64_t at = find(sh, &w);
        uint64_t clock, gen = atomic_load_explicit(&hsr_gen, memory_order_acquire);
        if (at >= 0 && hsr_stamp_clock(born, gen, &clock) == HSR_STAMP_OK) {
            struct hsr_cslot *c = &sh->s[at];
            c->w0 = (c->w0 & ((1ull << 58) - 1)) | (clock >> 32) << 58;
            c->w1 = (c->w1 & 0xFFFFFFFFu) | clock << 32;
            hsr_spin_unlock(&sh->lock);
            return;
        }
        hsr_spin_unlock(&sh->lock);
        struct hsr_slot s, other;
        if (at >= 0 && hsr_table_take(&w, UINT64_MAX, 0, &s) == 0) { /* not stampable: wide */
            s.born = born;
            if (hsr_wide_insert(hsr_addr_hash(addr), &s, &other) < 0)
                hsr_track_left_out(((struct hsr_track_rec *)(s.rec & ~(uintptr_t)1))->size);
            return;
        }
    }
    if (atomic_load_explicit(&hsr_wide_used, memory_order_relaxed))
        hsr_wide_set_born(hsr_addr_hash(addr), addr, born);
}

/* The blocks of the generation four back (parity p) made old in one shard; one that
 * cannot be (born too late for an old stamp) goes to the wide table. */
static void sweep(struct hsr_table_shard *sh, uint64_t parity, uint64_t gen)
{
    hsr_spin_lock(&sh->lock);
    for (uint64_t i = 0; i < (uint64_t)sh->m * HSR_BUCKET;) {
        struct hsr_cslot *c = &sh->s[i];
        uint64_t field = hsr_cslot_clock(c);
        if (!c->w0 || !hsr_stamp_young_of(field, parity)) {
            i++;
            continue;
        }
        uint64_t span, born = hsr_stamp_born(field, gen, &span);
        uint64_t old = hsr_stamp_clock_old(born);
        if (old) {
            c->w0 = (c->w0 & ((1ull << 58) - 1)) | (old >> 32) << 58;
            c->w1 = (c->w1 & 0xFFFFFFFFu) | old << 32;
            i++;
            continue;
        }
        struct hsr_cslot copy = *c;
        delete_at(sh, i); /* slot i holds its bucket's last entry now: looked at again */
        struct hsr_slot s, other;
        hsr_cslot_unpack(&copy, 0, born, span, &s);
        if (hsr_wide_insert(hsr_addr_hash(s.addr), &s, &other) < 0) {
            /* no memory: the block leaves tracking (counted untracked from now) */
            hsr_track_left_out(((struct hsr_track_rec *)(s.rec & ~(uintptr_t)1))->size);
            hsr_split_add(&hsr_track_blocks, NULL, -1);
        }
    }
    hsr_spin_unlock(&sh->lock);
}

void hsr_gen_advance(uint64_t now)
{
    hsr_spin_lock(&advancing);
    uint64_t gen = atomic_load_explicit(&hsr_gen, memory_order_relaxed);
    if (now >= hsr_gen_start[gen] && (now - hsr_gen_start[gen]) >> hsr_gen_bits &&
        gen + 1 < HSR_GENERATIONS) {
        hsr_gen_start[gen + 1] = now;
        for (unsigned i = 0; i < HSR_SHARDS; i++)
            sweep(&hsr_table_shards[i], (gen + 1) & 3, gen);
        atomic_store_explicit(&hsr_gen, gen + 1, memory_order_release);
    }
    hsr_spin_unlock(&advancing);
}

void hsr_track_table_lock(void)
{
    hsr_spin_lock(&advancing);
    for (unsigned i = 0; i < HSR_SHARDS; i++)
        hsr_spin_lock(&hsr_table_shards[i].lock);
    hsr_wide_lock();
}

void hsr_track_table_unlock(void)
{
    hsr_wide_unlock();
    for (unsigned i = 0; i < HSR_SHARDS; i++)
        hsr_spin_unlock(&hsr_table_shards[i].lock);
    hsr_spin_unlock(&advancing);
}

/* The child of a fork forgets the parent's blocks: their frees are not found. */
void hsr_track_table_clear(void)
{
    hsr_wide_clear();
    for (unsigned i = 0; i < HSR_SHARDS; i++) {
        struct hsr_table_shard *sh = &hsr_table_shards[i];
        if (sh->s)
            memset(sh->s, 0, (size_t)sh->m * HSR_BUCKET * sizeof *sh->s);
        sh->used = 0;
        hsr_spin_unlock(&sh->lock);
    }
    hsr_split_reset(&hsr_track_blocks);
    hsr_spin_unlock(&advancing);
}
