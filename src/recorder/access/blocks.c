/*
 * blocks.c — a sampled block's measure from its allocation to its end: the decision
 * before the real call (hsr_access_take), the record made after the count
 * (hsr_access_born), each look at its pages, and its end (free, realloc), where its
 * figures join its row.
 *
 * A block measured in place (>= HSR_ACCESS_LARGE bytes) has its inner pages made fresh
 * before the program gets it, unless they already are (a fresh mmap of the allocator):
 * malloc's contents are unspecified, calloc's zero, and a dropped private page reads
 * as zero, so the program sees no difference. Its partial first and last pages, shared
 * with the allocator's headers, take the state of their inner neighbour. Bytes a
 * realloc carried over are never dropped and count as touched. Such a block is found
 * at its free by a hash of its address, behind a filter the free path reads without
 * the lock (access.h).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "access/internal.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "count/counting.h"
#include "hooks/blocks.h"
#include "hooks/hooks.h"
#include "stacks/sampling.h"

struct hsr_access_block *hsr_access_blocks;
uint32_t hsr_access_blocks_used = 1;
struct hsr_access_state hsr_access_state;
uint16_t hsr_access_filter[HSR_ACCESS_FILTER];
static uint32_t free_records; /* free list head, 0: none */
static uint32_t *place_index; /* in-place blocks: hash slot -> record, 0 empty */
static _Atomic int lock_word;

#define PLACE_SLOTS (2u * HSR_ACCESS_BLOCKS)

/* What hsr_access_take decided for the allocation under way in this thread. */
enum { NOT_SAMPLE = 0, TO_POOL, TO_PLACE, UNMEASURED_POOL, UNMEASURED_ALIGN, UNMEASURED_OTHER };
static HSR_TLS struct {
    int what;
    uint32_t id; /* TO_POOL: the record readied with the slot */
} pending;

/* ---- the lock ---- */

int hsr_access_trylock(int spins)
{
    for (int i = 0; spins < 0 || i <= spins; i++) {
        int free_ = 0;
        if (atomic_compare_exchange_weak_explicit(&lock_word, &free_, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return 1;
        if (i > 64)
            sched_yield();
    }
    return 0;
}

void hsr_access_lock(void) { (void)hsr_access_trylock(-1); }
void hsr_access_unlock(void) { atomic_store_explicit(&lock_word, 0, memory_order_release); }

static uint64_t now_ns(void) { return hsr_now_ns(CLOCK_MONOTONIC); }

static uintptr_t page_up(uintptr_t a) { return (a + hsr_page_size - 1) & ~(hsr_page_size - 1); }
static uintptr_t page_down(uintptr_t a) { return a & ~(hsr_page_size - 1); }

/* ---- records ---- */

static uint32_t record_new(void)
{
    uint32_t id = free_records;
    if (id) {
        free_records = hsr_access_blocks[id].next_free;
    } else if (hsr_access_blocks && hsr_access_blocks_used < HSR_ACCESS_BLOCKS) {
        id = hsr_access_blocks_used++;
    } else {
        return 0;
    }
    memset(&hsr_access_blocks[id], 0, sizeof hsr_access_blocks[id]);
    return id;
}

void hsr_access_record_free(uint32_t id)
{
    hsr_access_blocks[id].state = HSR_BLOCK_FREE;
    hsr_access_blocks[id].next_free = free_records;
    free_records = id;
}

/* ---- in-place blocks by address (linear probing, deletion by backward shift) ---- */

static uint32_t place_hash(uintptr_t a)
{
    return (uint32_t)(((a >> 4) * 0x9E3779B97F4A7C15ull) >> 40);
}

static uint32_t *place_find(uintptr_t a)
{
    for (uint32_t i = place_hash(a);; i++) {
        uint32_t *s = &place_index[i % PLACE_SLOTS];
        if (!*s || hsr_access_blocks[*s].start == a)
            return s;
    }
}

static void place_remove(uint32_t *s)
{
    uint32_t i = (uint32_t)(s - place_index);
    hsr_access_filter[hsr_access_filter_slot(hsr_access_blocks[*s].start)]--;
    *s = 0;
    for (uint32_t j = (i + 1) % PLACE_SLOTS; place_index[j]; j = (j + 1) % PLACE_SLOTS) {
        uint32_t id = place_index[j], home = place_hash(hsr_access_blocks[id].start) % PLACE_SLOTS;
        /* moves back into the hole unless its home lies cyclically in (i, j] */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            place_index[i] = id;
            place_index[j] = 0;
            i = j;
        }
    }
}

/* ---- looking at a block's pages ---- */

struct look_ctx {
    const struct hsr_access_block *b;
    struct hsr_access_look *look;
};

static void add_run(void *ctx, uintptr_t lo, uintptr_t hi, int zero, int huge)
{
    struct look_ctx *c = ctx;
    const struct hsr_access_block *b = c->b;
    uintptr_t end = b->start + b->size;
    uintptr_t from = lo > b->start ? lo : b->start, to = hi < end ? hi : end;
    if (b->kind == HSR_IN_PLACE) { /* the partial edge pages follow their inner neighbour */
        uintptr_t kept_end = b->start + b->kept;
        if (lo == b->lo)
            from = kept_end > b->start ? kept_end : b->start;
        if (hi == b->hi)
            to = end;
    }
    if (to > from)
        c->look->touched_bytes += to - from;
    c->look->touched = 1;
    c->look->zero_page |= zero;
    c->look->huge |= huge;
}

void hsr_access_look_at(struct hsr_access_block *b, uint64_t now, struct hsr_access_look *look)
{
    memset(look, 0, sizeof *look);
    struct look_ctx c = {b, look};
    look->ok = hsr_pages_touched(b->lo, b->hi, &c, add_run) == 0;
    uint64_t kept = b->kept < b->size ? b->kept : b->size;
    look->touched_bytes += kept;
    if (kept)
        look->touched = 1;
    if (look->touched_bytes > b->size)
        look->touched_bytes = b->size;
    if (look->ok)
        hsr_access_seen(b, now, look->touched, look->zero_page);
    b->huge |= (uint8_t)look->huge;
}

void hsr_access_seen(struct hsr_access_block *b, uint64_t now, int touched, int zero_page)
{
    if (touched && !b->by_ns)
        b->by_ns = now;
    else if (!touched)
        b->after_ns = now;
    if (zero_page && !b->zeroed && !b->unjudged)
        b->read_first = 1;
}

void hsr_access_add_finished(struct hsr_access_figures *f, const struct hsr_access_block *b,
                             const struct hsr_access_look *look, uint64_t now)
{
    f->measured++;
    f->touched_bytes += look->touched_bytes;
    f->never_touched += !look->touched;
    f->read_first += b->read_first;
    f->zeroed += b->zeroed;
    f->huge += b->huge;
    if (look->touched) {
        uint64_t by = b->by_ns ? b->by_ns : now;
        f->after_hist[hsr_access_bin(b->after_ns - b->born_ns)]++;
        f->by_hist[hsr_access_bin(by - b->born_ns)]++;
    }
}

/* The block's end (with the lock, its record no longer live): figures into its row. */
void hsr_access_finish(uint32_t id, const struct hsr_access_look *look, uint64_t now)
{
    struct hsr_access_block *b = &hsr_access_blocks[id];
    struct hsr_access_row *r = hsr_access_rows_at(b->row);
    if (!r || b->inherited)
        return;
    if (look->ok)
        hsr_access_add_finished(&r->f, b, look, now);
    else
        hsr_access_state.unmeasured_other++;
}

/* ---- allocation ---- */

static int due(uint64_t size)
{
    if (!size || !hsr_sample_mean)
        return 0;
    if (HSR_UNLIKELY(hsr_tls.sample_left == 0))
        hsr_sample_ready();
    return hsr_tls.sample_left <= (int64_t)size;
}

void *hsr_access_take(uint64_t size, size_t align)
{
    pending.what = NOT_SAMPLE;
    if (!due(size))
        return NULL;
    if (hsr_pages_mechanism == HS_ACCESS_NONE) {
        pending.what = UNMEASURED_OTHER;
        return NULL;
    }
    /* aligned beyond a page, it starts a page: its pages are its own where it is */
    if (size >= HSR_ACCESS_LARGE || (align > hsr_page_size && size >= hsr_page_size)) {
        pending.what = TO_PLACE;
        return NULL;
    }
    if (align > hsr_page_size) {
        pending.what = UNMEASURED_ALIGN;
        return NULL;
    }
    /* the slot and its record together: a pool block must always be found at its free */
    hsr_access_lock();
    uintptr_t slot = hsr_pool_take(size);
    uint32_t id = slot ? record_new() : 0;
    if (slot && !id) {
        hsr_pool_read(slot, size, 0); /* no record: the slot goes unused */
        slot = 0;
    }
    if (id) {
        struct hsr_access_block *b = &hsr_access_blocks[id];
        b->start = slot;
        b->size = size;
        b->state = HSR_BLOCK_READY;
        hsr_pool_set_record(slot, size, id);
    }
    hsr_access_unlock();
    pending.what = slot ? TO_POOL : UNMEASURED_POOL;
    pending.id = id;
    return (void *)slot;
}

/* In place: the pages from past the bytes kept to the last whole one, made fresh if any
 * is not. 0: measurable. */
static int make_fresh(struct hsr_access_block *b)
{
    uintptr_t kept_end = b->start + (b->kept < b->size ? b->kept : b->size);
    b->lo = page_up(kept_end);
    b->hi = page_down(b->start + b->size);
    if (b->lo >= b->hi) {
        b->lo = b->hi = 0;
        return 0;
    }
    struct hsr_access_look look = {0};
    struct look_ctx c = {b, &look};
    if (hsr_pages_touched(b->lo, b->hi, &c, add_run) != 0)
        return -1;
    return look.touched ? hsr_pages_drop(b->lo, b->hi) : 0;
}

void hsr_access_born(void *p, uint64_t size, struct hsr_stack_entry *type, uint32_t region,
                     unsigned api, uint64_t kept)
{
    int what = pending.what;
    pending.what = NOT_SAMPLE;
    if (what == NOT_SAMPLE || !p)
        return;
    struct hsr_access_block b = {0};
    b.start = (uintptr_t)p;
    b.size = size;
    b.kept = kept;
    b.zeroed = api == HS_API_CALLOC;
    if (what == TO_POOL) {
        b.kind = HSR_IN_POOL;
        b.lo = b.start;
        b.hi = b.start + page_up(size);
    } else if (what == TO_PLACE) {
        b.kind = HSR_IN_PLACE;
        if (make_fresh(&b) != 0)
            what = UNMEASURED_OTHER;
    }
    b.born_ns = b.after_ns = now_ns();
    if (b.kept)
        b.by_ns = b.born_ns; /* the carried-over bytes were written by the realloc */
    hsr_access_lock();
    uint32_t row = hsr_access_rows_find(type, region, size);
    struct hsr_access_row *r = hsr_access_rows_at(row);
    if (r)
        r->f.samples++;
    uint32_t id = what == TO_POOL ? pending.id : what == TO_PLACE ? record_new() : 0;
    if (!id) {
        uint64_t *why = what == UNMEASURED_POOL    ? &hsr_access_state.unmeasured_pool
                        : what == UNMEASURED_ALIGN ? &hsr_access_state.unmeasured_align
                                                   : &hsr_access_state.unmeasured_other;
        if (r)
            (*why)++;
        hsr_access_unlock();
        return;
    }
    b.row = row;
    b.state = HSR_BLOCK_LIVE;
    hsr_access_blocks[id] = b;
    if (what == TO_PLACE) {
        *place_find(b.start) = id;
        hsr_access_filter[hsr_access_filter_slot(b.start)]++;
    }
    hsr_access_unlock();
}

/* ---- the end of a block ---- */

/* Looks at a record taken out of the live ones, then adds it up; the lock not held. */
static void end_record(uint32_t id)
{
    struct hsr_access_look look;
    uint64_t now = now_ns();
    hsr_access_look_at(&hsr_access_blocks[id], now, &look);
    hsr_access_lock();
    hsr_access_finish(id, &look, now);
    hsr_access_record_free(id);
    hsr_access_unlock();
}

static void bad_free(const void *p)
{
    char msg[160];
    snprintf(msg, sizeof msg, "free(%p): not a block the program holds (a double or invalid free)",
             p);
    hsr_warn(msg);
    abort();
}

/* A pool block's end: nothing here but the time. Nobody touches its pages any more, so
 * they keep its state until the watcher reads them with the other blocks' and drops them
 * with their neighbours' (settle.c): no system call in the program's thread. */
static void release(void *p)
{
    uintptr_t a = (uintptr_t)p;
    uint64_t now = now_ns();
    hsr_access_lock();
    uint32_t id = hsr_pool_record(a);
    struct hsr_access_block *b = id ? &hsr_access_blocks[id] : NULL;
    if (!b || b->start != a || (b->state != HSR_BLOCK_LIVE && b->state != HSR_BLOCK_READY)) {
        hsr_access_unlock();
        bad_free(p);
    }
    b->state = HSR_BLOCK_RELEASED;
    b->released_ns = now;
    int many = ++hsr_access_released >= HSR_ACCESS_SETTLE;
    hsr_access_unlock();
    if (many) /* the watcher is late: this thread settles, so the pool's memory stays bounded */
        hsr_access_settle(now, 1);
}

/* A block measured in place, before the allocator frees or moves it. */
/* Its requested size, or 0 when a is no such block. */
static uint64_t forget_in_place(uintptr_t a)
{
    if (!hsr_access_filter[hsr_access_filter_slot(a)])
        return 0;
    hsr_access_lock();
    uint32_t *s = place_index ? place_find(a) : NULL;
    uint32_t id = s ? *s : 0;
    uint64_t size = 0;
    if (id) {
        place_remove(s);
        hsr_access_blocks[id].state = HSR_BLOCK_FREE;
        size = hsr_access_blocks[id].size;
    }
    hsr_access_unlock();
    if (id)
        end_record(id);
    return size;
}

int hsr_access_free(void *p, unsigned api)
{
    if (!hsr_access_owns(p)) {
        forget_in_place((uintptr_t)p);
        return 0;
    }
    int counting = !hsr_guard && atomic_load_explicit(&hsr_recording, memory_order_relaxed);
    if (counting) {
        hsr_guard = 1;
        hsr_note_free(p);
    }
    release(p);
    if (counting) {
        hsr_count_call(api);
        hsr_guard = 0;
    }
    return 1;
}

/* ---- realloc ---- */

static uint64_t pool_size(const void *p)
{
    hsr_access_lock();
    uint32_t id = hsr_pool_record((uintptr_t)p);
    struct hsr_access_block *b = id ? &hsr_access_blocks[id] : NULL;
    uint64_t size = b && b->start == (uintptr_t)p && b->state != HSR_BLOCK_FREE ? b->size : 0;
    hsr_access_unlock();
    if (!size)
        bad_free(p);
    return size;
}

void *hsr_access_realloc(void *old, size_t n, uint64_t *kept, int raw)
{
    uint64_t carried = 0;
    void *p;
    if (old && hsr_access_owns(old)) {
        uint64_t have = pool_size(old);
        if (n == 0) {
            release(old);
            return NULL;
        }
        p = raw ? NULL : hsr_access_take(n, 0);
        int pooled = p != NULL;
        if (!p && !(p = hsr_real.malloc(n)))
            return NULL;
        memcpy(p, old, have < n ? have : n);
        carried = pooled ? 0 : (have < n ? have : n); /* a pool block's copy is seen */
        release(old);
    } else {
        /* what is carried over: a sampled block's requested bytes, else its usable ones */
        uint64_t have = old ? forget_in_place((uintptr_t)old) : 0;
        if (old && !have)
            have = hsr_access_next_usable(old);
        p = raw ? NULL : hsr_access_take(n, 0);
        if (p) {
            if (old) {
                memcpy(p, old, have < n ? have : n);
                hsr_real.free(old);
            }
        } else {
            p = hsr_real.realloc(old, n);
            carried = have < n ? have : n;
        }
    }
    if (kept)
        *kept = carried;
    return p;
}

/* ---- usable size ---- */

size_t hsr_access_usable(void *p)
{
    if (hsr_access_owns(p)) {
        uint32_t id = hsr_pool_record((uintptr_t)p);
        uint64_t size = id ? hsr_access_blocks[id].size : 0;
        return (size_t)((size + 15) & ~(uint64_t)15);
    }
    return hsr_access_next_usable(p);
}

/* ---- start, fork ---- */

int hsr_access_blocks_init(void)
{
    hsr_access_blocks = hsr_map((size_t)HSR_ACCESS_BLOCKS * sizeof *hsr_access_blocks);
    place_index = hsr_map((size_t)PLACE_SLOTS * sizeof *place_index);
    return hsr_access_blocks && place_index ? 0 : -1;
}

/* The child holds the parent's blocks too (it may free them): they stay, out of its
 * figures. The lock may have been held by a thread that the fork left behind. */
void hsr_access_blocks_after_fork_child(void)
{
    atomic_store(&lock_word, 0);
    pending.what = NOT_SAMPLE;
    memset(&hsr_access_state, 0, sizeof hsr_access_state);
    for (uint32_t id = 1; id < hsr_access_blocks_used; id++)
        if (hsr_access_blocks[id].state != HSR_BLOCK_FREE) /* freed ones not read yet too */
            hsr_access_blocks[id].inherited = 1;
}

/* In the parent: with page flags only, the pages of blocks alive at the fork are shared
 * with the child now, no longer told read from written. */
void hsr_access_blocks_after_fork_parent(void)
{
    if (hsr_pages_mechanism != HS_ACCESS_PAGEMAP)
        return;
    for (uint32_t id = 1; id < hsr_access_blocks_used; id++)
        if (hsr_access_blocks[id].state == HSR_BLOCK_LIVE)
            hsr_access_blocks[id].unjudged = 1;
    hsr_access_state.flags |= HSR_ACCESS_FLAG_FORK_FLAGS;
}
