/*
 * tracking.c — tracking mode (HEAPSCOPE_TRACK=1): what happens to every block.
 *
 * Each live block is in a side table (address -> record, birth time, allocating
 * thread and its allocation number, component flag). Each record (struct
 * hs_track_rec, tracking.h) is one stack trace type (the sizes and regions whose
 * stacks are captured: the record hangs off the type's entry in stacks.c) or one
 * (region, size) pair (every other block), and holds allocs, frees, temporaries,
 * the lifetime histograms, the blocks live now and at the heap peak.
 *
 * Side table: 64 shards by address hash, each an open-addressing table (linear
 * probing, deletion by backward shift, no tombstones) under its own spinlock,
 * doubling when half full. 32 bytes per slot, so 64..128 bytes per live block.
 * At most HEAPSCOPE_TRACK_MAX_BLOCKS blocks are live in it (default 8 Mi); beyond,
 * blocks are counted `untracked` (their frees are not found and ignored).
 * Everything is mmap'd (pool.c), outside the program's heap.
 *
 * The peak ("who holds it"), the lazy way: a new maximum of the requested bytes
 * live marks a peak pending; the first free after it (or the snapshot) copies
 * every record's live count into its at-peak count before anything is freed, so
 * the copy is the state at the maximum. Exact for one thread; with several the
 * copy is taken while others may allocate.
 *
 * A temporary: freed with at most N (HEAPSCOPE_TEMP_BETWEEN, default 0) other
 * allocations of the allocating thread in between, and, if HEAPSCOPE_TEMP_NS is
 * set, within that many nanoseconds. "The allocating thread" is its count table:
 * a thread that starts after another ended adopts the ended one's table.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blocks.h"
#include "guard.h"
#include "recorder.h"
#include "tracking.h"

int hs_track_on;
struct hs_track_settings hs_track = {0, 0, 8u << 20};

/* ---- records ---- */

static struct hs_track_rec *_Atomic records;  /* every record, newest first */
static _Atomic uint64_t record_count;
static _Atomic int64_t table_bytes;           /* memory mapped for tracking */

struct hs_track_rec *hs_track_records(void)
{
    return atomic_load_explicit(&records, memory_order_acquire);
}

static struct hs_track_rec *record_new(uint32_t region, uint64_t size, uint32_t depth,
                                       const uint64_t *frames)
{
    struct hs_track_rec *r = hs_pool_alloc(sizeof *r);
    if (!r)
        return NULL;
    atomic_fetch_add(&table_bytes, (int64_t)sizeof *r);
    r->region = region;
    r->size = size;
    r->depth = depth;
    r->frames = frames;
    struct hs_track_rec *head = atomic_load(&records);
    do
        r->next = head;
    while (!atomic_compare_exchange_weak(&records, &head, r));
    atomic_fetch_add(&record_count, 1);
    return r;
}

/* Per (region, size): a global table, read without lock, inserted under one. */
#define SIZE_SLOTS (1u << 20)
struct size_slot {
    _Atomic uint64_t key;   /* size + 1; 0 = empty */
    uint32_t region;
    struct hs_track_rec *_Atomic rec;
};
static struct size_slot *size_slots;
static _Atomic int size_lock;

__attribute__((noinline, cold)) static void spin_wait(_Atomic int *l)
{
    for (int n = 0; atomic_exchange_explicit(l, 1, memory_order_acquire); n++)
        if (n > 64)
            sched_yield();
}

static inline void spin_lock(_Atomic int *l)
{
    if (HS_UNLIKELY(atomic_exchange_explicit(l, 1, memory_order_acquire)))
        spin_wait(l);
}

static inline void spin_unlock(_Atomic int *l) { atomic_store_explicit(l, 0, memory_order_release); }

static inline uint64_t size_hash(uint32_t region, uint64_t key)
{
    uint64_t h = (key ^ ((uint64_t)region << 40)) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 31);
}

/* Not found without the lock: look again under it, and add it. */
__attribute__((noinline)) static struct hs_track_rec *size_record_add(uint32_t region,
                                                                      uint64_t size)
{
    uint64_t key = size + 1, h = size_hash(region, key);
    struct hs_track_rec *r = NULL;
    spin_lock(&size_lock);
    for (uint64_t i = h, probes = 0; probes < SIZE_SLOTS; i++, probes++) {
        struct size_slot *s = &size_slots[i & (SIZE_SLOTS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == key && s->region == region) {
            r = atomic_load_explicit(&s->rec, memory_order_acquire);
            break;
        }
        if (k)
            continue;
        r = record_new(region, size, 0, NULL);
        if (r) {
            atomic_fetch_add(&table_bytes, (int64_t)sizeof *s);
            s->region = region;
            atomic_store_explicit(&s->rec, r, memory_order_release);
            atomic_store_explicit(&s->key, key, memory_order_release);
        }
        break;
    }
    spin_unlock(&size_lock);
    return r;  /* NULL: a million distinct (region, size) pairs */
}

static inline struct hs_track_rec *size_record(uint32_t region, uint64_t size)
{
    uint64_t key = size + 1, h = size_hash(region, key);
    for (uint64_t i = h; i - h < SIZE_SLOTS; i++) {
        struct size_slot *s = &size_slots[i & (SIZE_SLOTS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (HS_LIKELY(k == key && s->region == region))
            return atomic_load_explicit(&s->rec, memory_order_acquire);
        if (!k)
            break;
    }
    return size_record_add(region, size);
}

/* The record of a stack trace type, made by the type's owner thread. */
static struct hs_track_rec *type_record(struct hs_stack_entry *e, uint32_t region, uint64_t size)
{
    void *_Atomic *slot = hs_stack_entry_slot(e);
    struct hs_track_rec *r = atomic_load_explicit(slot, memory_order_acquire);
    if (HS_LIKELY(r))
        return r;
    uint32_t depth;
    const uint64_t *frames = hs_stack_entry_frames(e, &depth);
    r = record_new(region, size, depth, frames);
    if (r)
        atomic_store_explicit(slot, r, memory_order_release);
    return r;
}

/* ---- the side table ---- */

struct slot {
    uint64_t addr;      /* 0 = empty */
    uint64_t born;      /* raw clock at birth (hs_clock_raw) */
    uintptr_t rec;      /* struct hs_track_rec *, | 1 if allocated inside a component */
    uint64_t seq;       /* table index << 48 | its allocation number (48 bits) */
};

#define SHARDS 64u
#define SEQ_BITS 48
struct shard {
    _Atomic int lock;
    uint64_t mask, used;
    uint64_t limit;     /* used >= limit: grow first (half the slots; 0 before the first) */
    struct slot *s;
} __attribute__((aligned(64)));

static struct shard shards[SHARDS];
static _Atomic uint64_t live_tracked, untracked;

static inline uint64_t addr_hash(uint64_t a)
{
    uint64_t h = (a >> 4) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

static inline struct shard *shard_of(uint64_t h) { return &shards[h >> 58]; }

__attribute__((noinline, cold)) static int shard_grow(struct shard *sh)
{
    uint64_t slots = sh->s ? (sh->mask + 1) * 2 : 1024;
    struct slot *s = hs_map(slots * sizeof *s);
    if (!s)
        return -1;
    for (uint64_t i = 0; sh->s && i <= sh->mask; i++)
        if (sh->s[i].addr)
            for (uint64_t j = addr_hash(sh->s[i].addr);; j++)
                if (!s[j & (slots - 1)].addr) {
                    s[j & (slots - 1)] = sh->s[i];
                    break;
                }
    if (sh->s) {
        hs_unmap(sh->s, (sh->mask + 1) * sizeof *s);
        atomic_fetch_sub(&table_bytes, (int64_t)((sh->mask + 1) * sizeof *s));
    }
    atomic_fetch_add(&table_bytes, (int64_t)(slots * sizeof *s));
    sh->s = s;
    sh->mask = slots - 1;
    sh->limit = slots / 2;
    return 0;
}

/* 0, or -1 when the table may not hold one more block. h = addr_hash(in->addr). */
static inline int side_insert(uint64_t h, const struct slot *in)
{
    if (HS_UNLIKELY(atomic_fetch_add_explicit(&live_tracked, 1, memory_order_relaxed) >=
                    hs_track.max_blocks)) {
        atomic_fetch_sub_explicit(&live_tracked, 1, memory_order_relaxed);
        return -1;
    }
    struct shard *sh = shard_of(h);
    spin_lock(&sh->lock);
    if (HS_UNLIKELY(sh->used >= sh->limit) && shard_grow(sh)) {
        spin_unlock(&sh->lock);
        atomic_fetch_sub_explicit(&live_tracked, 1, memory_order_relaxed);
        return -1;
    }
    struct slot *s = sh->s;
    uint64_t m = sh->mask, i = h & m;
    while (s[i].addr) {
        if (HS_UNLIKELY(s[i].addr == in->addr)) {
            /* the same address twice: the allocator handed out a block we saw die? keep one */
            atomic_fetch_sub_explicit(&live_tracked, 1, memory_order_relaxed);
            sh->used--;
            break;
        }
        i = (i + 1) & m;
    }
    sh->used++;
    s[i] = *in;
    spin_unlock(&sh->lock);
    return 0;
}

/* Take addr's slot out of the table into *out; 0 if found. h = addr_hash(addr). */
static inline int side_remove(uint64_t h, uint64_t addr, struct slot *out)
{
    struct shard *sh = shard_of(h);
    spin_lock(&sh->lock);
    struct slot *s = sh->s;
    if (HS_UNLIKELY(!s)) {
        spin_unlock(&sh->lock);
        return -1;
    }
    uint64_t m = sh->mask, i = h & m;
    while (s[i].addr != addr) {
        if (!s[i].addr) {
            spin_unlock(&sh->lock);
            return -1;
        }
        i = (i + 1) & m;
    }
    *out = s[i];
    /* backward shift: move later members of the probe run into the hole */
    for (uint64_t j = (i + 1) & m; s[j].addr; j = (j + 1) & m) {
        uint64_t home = addr_hash(s[j].addr) & m;
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            s[i] = s[j];
            i = j;
        }
    }
    s[i].addr = 0;
    sh->used--;
    spin_unlock(&sh->lock);
    atomic_fetch_sub_explicit(&live_tracked, 1, memory_order_relaxed);
    return 0;
}

/* ---- the peak ---- */

static _Atomic int64_t cur_bytes, max_bytes;
static _Atomic uint64_t max_ns;
static _Atomic int peak_pending;

static void capture_peak(void)
{
    for (struct hs_track_rec *r = hs_track_records(); r; r = r->next)
        atomic_store_explicit(&r->live_at_peak, hs_track_live(r), memory_order_relaxed);
}

void hs_track_peak_now(void)
{
    int one = 1;
    if (atomic_compare_exchange_strong(&peak_pending, &one, 0))
        capture_peak();
}

void hs_track_figures(struct hs_track_figures *f)
{
    f->peak_bytes = atomic_load(&max_bytes);
    f->peak_mono_ns = atomic_load(&max_ns);
    f->end_bytes = atomic_load(&cur_bytes);
    f->untracked = atomic_load(&untracked);
    f->table_bytes = atomic_load(&table_bytes);
}

/* ---- birth and death ---- */

static void add(_Atomic uint64_t *c, uint64_t n) { atomic_fetch_add_explicit(c, n, memory_order_relaxed); }

static inline __attribute__((always_inline)) int track_born(struct hs_thread *t, void *p,
                                                             uint64_t size, struct hs_site site,
                                                             int component)
{
    uint64_t seq = atomic_load_explicit(&t->alloc_seq, memory_order_relaxed) + 1;
    atomic_store_explicit(&t->alloc_seq, seq, memory_order_relaxed);
    struct hs_track_rec *r = site.type ? type_record(site.type, site.region, size)
                                       : size_record(site.region, size);
    uint64_t now = hs_clock_raw();
    struct slot s = {(uint64_t)(uintptr_t)p, now, (uintptr_t)r | (component ? 1u : 0u),
                     (uint64_t)t->index << SEQ_BITS | (seq & ((1ull << SEQ_BITS) - 1))};
    if (!r || t->index >= HS_MAX_TABLES || side_insert(addr_hash(s.addr), &s)) {
        add(&untracked, 1);
        return -1;
    }
    add(&r->allocs, 1);
    int64_t extra = hs_heap_usable(p) - (int64_t)size;
    if (extra > 0)
        add(&r->extra_bytes, (uint64_t)extra);
    int64_t live = atomic_fetch_add_explicit(&cur_bytes, (int64_t)size, memory_order_relaxed) +
                   (int64_t)size;
    int64_t max = atomic_load_explicit(&max_bytes, memory_order_relaxed);
    while (live > max) {
        if (atomic_compare_exchange_weak(&max_bytes, &max, live)) {
            uint64_t ns = hs_clock_raw_ns(now);
            atomic_store(&max_ns, hs_start_mono_ns && ns > hs_start_mono_ns
                                      ? ns - hs_start_mono_ns : 0);
            atomic_store(&peak_pending, 1);
            break;
        }
    }
    return 0;
}

int hs_track_born(void *p, uint64_t size, struct hs_site site, int component)
{
    struct hs_thread *t = hs_self;
    if (HS_UNLIKELY(!t) && !(t = hs_thread_attach()))
        return -1;
    return track_born(t, p, size, site, component);
}

void hs_track_birth(void *p, uint64_t size, struct hs_site site)
{
    struct hs_thread *t = hs_self;
    if (HS_UNLIKELY(!t) && !(t = hs_thread_attach()))
        return;
    int component = hs_place.in.component != 0;
    if (track_born(t, p, size, site, component) == 0)
        hs_heap_count(t, (int64_t)size, component);
}

int hs_track_dying(void *p, struct hs_dying *d)
{
    struct slot s;
    /* the slot is likely cold (a block allocated long ago): fetch it while the
     * clock is read */
    uint64_t h = addr_hash((uint64_t)(uintptr_t)p);
    struct shard *sh = shard_of(h);
    if (HS_LIKELY(sh->s)) {
        /* and the next slot, which the removal reads too (in the next line half
         * of the time) */
        __builtin_prefetch(&sh->s[h & sh->mask]);
        __builtin_prefetch(&sh->s[(h + 1) & sh->mask]);
    }
    d->dying_clock = hs_clock_raw();
    if (side_remove(h, (uint64_t)(uintptr_t)p, &s))
        return -1;
    d->record = (void *)(s.rec & ~(uintptr_t)1);
    d->component = (int)(s.rec & 1);
    d->size = ((struct hs_track_rec *)d->record)->size;
    d->born_clock = s.born;
    d->born_seq = s.seq;
    return 0;
}

void hs_track_revive(struct hs_dying *d)
{
    struct slot s = {(uint64_t)(uintptr_t)d->p, d->born_clock,
                     (uintptr_t)d->record | (d->component ? 1u : 0u), d->born_seq};
    if (side_insert(addr_hash(s.addr), &s)) {  /* cannot happen: its slot was just freed; but never lose it */
        struct hs_track_rec *r = d->record;
        add(&untracked, 1);
        atomic_fetch_sub_explicit(&r->allocs, 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&cur_bytes, (int64_t)d->size, memory_order_relaxed);
    }
}

static unsigned bin_of(uint64_t v)
{
    unsigned b = v ? 64u - (unsigned)__builtin_clzll(v) : 0;
    return b < HS_LIFETIME_BINS ? b : HS_LIFETIME_BINS - 1;
}

/* A tracked block's death, once out of the table: born/dying are raw clocks. */
static inline __attribute__((always_inline)) void record_death(struct hs_track_rec *r,
                                                               uint64_t born_clock,
                                                               uint64_t dying_clock,
                                                               uint64_t born_seq, uint64_t size)
{
    if (atomic_load_explicit(&peak_pending, memory_order_relaxed))
        hs_track_peak_now();
    uint64_t lifetime = hs_clock_raw_span(born_clock, dying_clock);
    uint32_t index = (uint32_t)(born_seq >> SEQ_BITS);
    struct hs_thread *owner = hs_self;  /* usually the allocating thread frees */
    if (HS_UNLIKELY(!owner || owner->index != index))
        owner = hs_thread_at(index);
    uint64_t born = born_seq & ((1ull << SEQ_BITS) - 1);
    uint64_t seq_now = owner ? atomic_load_explicit(&owner->alloc_seq, memory_order_relaxed) : born;
    uint64_t between = ((seq_now - born) & ((1ull << SEQ_BITS) - 1));
    add(&r->frees, 1);
    add(&r->time_hist[bin_of(lifetime)], 1);
    add(&r->between_hist[bin_of(between)], 1);
    if (between <= hs_track.temp_between && (!hs_track.temp_ns || lifetime <= hs_track.temp_ns))
        add(&r->temporaries, 1);
    atomic_fetch_sub_explicit(&cur_bytes, (int64_t)size, memory_order_relaxed);
}

void hs_track_dead(struct hs_dying *d)
{
    record_death(d->record, d->born_clock, d->dying_clock, d->born_seq, d->size);
}

void hs_track_free(void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p, h = addr_hash(a);
    struct shard *sh = shard_of(h);
    if (HS_LIKELY(sh->s)) {  /* as in hs_track_dying */
        __builtin_prefetch(&sh->s[h & sh->mask]);
        __builtin_prefetch(&sh->s[(h + 1) & sh->mask]);
    }
    uint64_t now = hs_clock_raw();
    struct slot s;
    if (side_remove(h, a, &s))
        return;
    struct hs_track_rec *r = (struct hs_track_rec *)(s.rec & ~(uintptr_t)1);
    uint64_t size = r->size;
    record_death(r, s.born, now, s.seq, size);
    struct hs_thread *t = hs_self;
    if (HS_LIKELY(t) || (t = hs_thread_attach()))
        hs_heap_count(t, -(int64_t)size, (int)(s.rec & 1));
}

/* ---- settings, fork ---- */

static uint64_t env_number(const char *name, uint64_t fallback, uint64_t lo, uint64_t hi)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end || *v == '-' || n < lo || n > hi) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s must be a whole number %llu..%llu, using %llu", name,
                 (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)fallback);
        hs_warn(msg);
        return fallback;
    }
    return n;
}

static void fork_prepare(void)
{
    spin_lock(&size_lock);
    for (unsigned i = 0; i < SHARDS; i++)
        spin_lock(&shards[i].lock);
}

static void fork_parent(void)
{
    for (unsigned i = 0; i < SHARDS; i++)
        spin_unlock(&shards[i].lock);
    spin_unlock(&size_lock);
}

/* The child starts from zero, as its counts do: the parent's blocks it inherited
 * are forgotten (their frees are not found), the records emptied. */
static void fork_child(void)
{
    for (unsigned i = 0; i < SHARDS; i++) {
        struct shard *sh = &shards[i];
        if (sh->s)
            memset(sh->s, 0, (sh->mask + 1) * sizeof *sh->s);
        sh->used = 0;
        spin_unlock(&sh->lock);
    }
    spin_unlock(&size_lock);
    for (struct hs_track_rec *r = hs_track_records(); r; r = r->next) {
        struct hs_track_rec *next = r->next;
        uint32_t region = r->region, depth = r->depth;
        uint64_t size = r->size;
        const uint64_t *frames = r->frames;
        memset(r, 0, sizeof *r);
        r->next = next;
        r->region = region;
        r->depth = depth;
        r->size = size;
        r->frames = frames;
    }
    atomic_store(&live_tracked, 0);
    atomic_store(&untracked, 0);
    atomic_store(&cur_bytes, 0);
    atomic_store(&max_bytes, 0);
    atomic_store(&max_ns, 0);
    atomic_store(&peak_pending, 0);
}

/* From the first allocation on (hooks.c calls this when it first resolves the
 * allocator, before any constructor), and at the latest from our constructor. */
__attribute__((constructor(101))) void hs_tracking_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    const char *on = getenv("HEAPSCOPE_TRACK");
    const char *trace = getenv("HEAPSCOPE_TRACE");
    int track = on && *on && strcmp(on, "0") != 0;
    if (!track && !(trace && *trace && strcmp(trace, "0") != 0))
        return;
    int saved_guard = hs_guard;
    hs_guard = 1;
    /* the temporary's bounds are the trace's too */
    hs_track.temp_between = env_number("HEAPSCOPE_TEMP_BETWEEN", 0, 0, (1ull << 40) - 1);
    hs_track.temp_ns = env_number("HEAPSCOPE_TEMP_NS", 0, 0, UINT64_MAX);
    hs_track.max_blocks = env_number("HEAPSCOPE_TRACK_MAX_BLOCKS", 8u << 20, 1, (1ull << 40) - 1);
    if (!track) {
        hs_guard = saved_guard;
        return;
    }
    size_slots = hs_map((size_t)SIZE_SLOTS * sizeof *size_slots);
    if (!size_slots) {
        hs_warn("cannot map the tracking tables: tracking off");
    } else {
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        hs_fast_clock_init();
        hs_track_on = 1;
        hs_heap_watch = 1;
    }
    hs_guard = saved_guard;
}
