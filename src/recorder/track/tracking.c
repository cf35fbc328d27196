/*
 * tracking.c — tracking mode (HEAPSCOPE_TRACK=1): what happens to every block.
 *
 * Each live block is in the side table (track_table.h: address -> record, birth
 * time, allocating thread and its allocation number, component flag). Each record
 * (struct hsr_track_rec, tracking.h; track_records.h) is one stack trace type or
 * one (region, size) pair, and holds allocs, frees, temporaries, the lifetime
 * histograms, the blocks live now and at the heap peak. This file: births,
 * deaths (counted a few frees late, see "deferred deaths" below), the heap peak,
 * the settings and fork.
 *
 * What a block costs is mostly memory traffic, so the hot paths avoid locked
 * instructions where one writer suffices: the main thread (table 0) adds to a set
 * of each record's counters (tracking.h) and to a part of the global figures
 * (struct hsr_split) plainly; the side table's shard lock remains.
 *
 * The peak ("who holds it"), the lazy way: a new maximum of the requested bytes
 * live marks a peak pending; the first death counted after it (or the snapshot)
 * copies every record's live count into its at-peak count before anything is
 * freed, so the copy is the state at the maximum. Exact for one thread; with
 * several the copy is taken while others may allocate.
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
#include "records.h"
#include "table.h"
#include "tracking.h"

int hsr_track_on;
struct hsr_track_settings hsr_track = {0, 0, 8u << 20};

/* Add n to a record's counter: plainly to its own set from table 0's thread
 * (tracking.h), else atomically. */
static inline void bump(_Atomic uint64_t *own, _Atomic uint64_t *shared, int mine, uint64_t n)
{
    if (HSR_LIKELY(mine))
        atomic_store_explicit(own, atomic_load_explicit(own, memory_order_relaxed) + n,
                              memory_order_relaxed);
    else
        atomic_fetch_add_explicit(shared, n, memory_order_relaxed);
}
#define BUMP(r, mine, field, n) bump(&(r)->own.field, &(r)->shared.field, mine, n)

static _Atomic uint64_t untracked;

/* ---- the peak ---- */

static struct hsr_split cur_bytes;  /* requested bytes of the tracked blocks live */
static _Atomic int64_t max_bytes;
static _Atomic uint64_t max_ns;
static _Atomic int peak_pending;

static void capture_peak(void)
{
    for (struct hsr_track_rec *r = hsr_track_records(); r; r = r->next)
        atomic_store_explicit(&r->live_at_peak, hsr_track_live(r), memory_order_relaxed);
}

void hsr_track_peak_now(void)
{
    int one = 1;
    if (atomic_compare_exchange_strong(&peak_pending, &one, 0))
        capture_peak();
}

void hsr_track_figures(struct hsr_track_figures *f)
{
    f->peak_bytes = atomic_load(&max_bytes);
    f->peak_mono_ns = atomic_load(&max_ns);
    f->end_bytes = hsr_split_value(&cur_bytes);
    f->untracked = atomic_load(&untracked);
    f->table_bytes = atomic_load(&hsr_track_table_bytes);
}

/* ---- birth ---- */

static void add(_Atomic uint64_t *c, uint64_t n) { atomic_fetch_add_explicit(c, n, memory_order_relaxed); }

static uint64_t replaced_died(struct hsr_thread *t, const struct hsr_slot *dead, uint64_t now);

/* Any death waiting in t's ring? (Every entry: a birth may have cleared the newest.) */
static int freed_pending(const struct hsr_thread *t)
{
    for (unsigned i = 0; i < HSR_FREED_RING; i++)
        if (atomic_load_explicit(&t->freed.e[i].addr, memory_order_relaxed))
            return 1;
    return 0;
}

static inline __attribute__((always_inline)) int track_born(struct hsr_thread *t, void *p,
                                                             uint64_t size, struct hsr_site site,
                                                             int component)
{
    uint64_t seq = atomic_load_explicit(&t->alloc_seq, memory_order_relaxed) + 1;
    atomic_store_explicit(&t->alloc_seq, seq, memory_order_relaxed);
    struct hsr_track_rec *r = site.type ? hsr_type_record(site.type, site.region, size)
                                       : hsr_size_record(site.region, size);
    uint64_t now = hsr_clock_raw();
    struct hsr_born_log *log = &t->born_log[seq % HSR_BORN_LOG];
    atomic_store_explicit(&log->seq, seq, memory_order_relaxed);   /* the number first: */
    atomic_thread_fence(memory_order_release);                      /* see track_born_log.c */
    atomic_store_explicit(&log->clock, now, memory_order_relaxed);
    struct hsr_slot s = {(uint64_t)(uintptr_t)p, now, (uintptr_t)r | (component ? 1u : 0u),
                        (uint64_t)t->index << HSR_SEQ_BITS | (seq & HSR_SEQ_MASK)};
    struct hsr_slot dead;
    int put = r && t->index < HSR_MAX_TABLES ? hsr_slot_insert(t, hsr_addr_hash(s.addr), &s, &dead)
                                            : -1;
    if (put < 0) {
        add(&untracked, 1);
        return -1;
    }
    if (put) {  /* the address's previous block, freed, its death not counted yet */
        uint64_t freed_at = replaced_died(t, &dead, now);
        if (HSR_UNLIKELY(freed_at >= now))  /* same clock reading (coarse clock): born later */
            hsr_slot_set_born(hsr_addr_hash(s.addr), s.addr, freed_at + 1);
    }
    int64_t live = hsr_split_add(&cur_bytes, t, (int64_t)size);
    int64_t max = atomic_load_explicit(&max_bytes, memory_order_relaxed);
    if (HSR_UNLIKELY(live > max) && freed_pending(t)) {
        /* a new maximum, or the thread's deferred frees not counted yet? Count
         * them first (a pending peak is copied at the first), then look again. */
        hsr_split_add(&cur_bytes, t, -(int64_t)size);
        hsr_track_flush(t);
        live = hsr_split_add(&cur_bytes, t, (int64_t)size);
    }
    int mine = t->index == 0;
    BUMP(r, mine, allocs, 1);
    int64_t extra = hsr_heap_usable_now(p) - (int64_t)size;
    if (extra > 0)
        BUMP(r, mine, extra_bytes, (uint64_t)extra);
    while (live > max) {
        if (atomic_compare_exchange_weak(&max_bytes, &max, live)) {
            uint64_t ns = hsr_clock_raw_ns(now);
            atomic_store(&max_ns, hsr_start_mono_ns && ns > hsr_start_mono_ns
                                      ? ns - hsr_start_mono_ns : 0);
            atomic_store(&peak_pending, 1);
            break;
        }
    }
    return 0;
}

int hsr_track_born(void *p, uint64_t size, struct hsr_site site, int component)
{
    struct hsr_thread *t = hsr_self;
    if (HSR_UNLIKELY(!t) && !(t = hsr_thread_attach()))
        return -1;
    return track_born(t, p, size, site, component);
}

void hsr_track_birth(void *p, uint64_t size, struct hsr_site site)
{
    struct hsr_thread *t = hsr_self;
    if (HSR_UNLIKELY(!t) && !(t = hsr_thread_attach()))
        return;
    int component = hsr_place.in.component != 0;
    if (track_born(t, p, size, site, component) == 0)
        hsr_heap_count(t, (int64_t)size, component);
}

/* ---- death ---- */

static unsigned bin_of(uint64_t v)
{
    unsigned b = v ? 64u - (unsigned)__builtin_clzll(v) : 0;
    return b < HSR_LIFETIME_BINS ? b : HSR_LIFETIME_BINS - 1;
}

/* Who freed a block, and when: the freeing thread's table (NULL if none), the raw
 * clock, and that table's index and allocation number at the free. */
struct freer {
    const struct hsr_thread *t;
    uint64_t clock;
    uint32_t index;
    uint64_t seq;
};

/* A tracked block's death, once out of the table (slot s). */
static inline __attribute__((always_inline)) void record_death(const struct freer *f,
                                                               const struct hsr_slot *s,
                                                               struct hsr_track_rec *r)
{
    if (atomic_load_explicit(&peak_pending, memory_order_relaxed))
        hsr_track_peak_now();
    uint64_t lifetime = hsr_clock_raw_span(s->born, f->clock);
    uint32_t index = (uint32_t)(s->seq >> HSR_SEQ_BITS);
    uint64_t born = s->seq & HSR_SEQ_MASK, seq_then = born;
    if (HSR_LIKELY(f->index == index)) {  /* usually the allocating thread frees */
        seq_then = f->seq;
    } else {  /* another thread's block: its allocations up to the free */
        const struct hsr_thread *owner = hsr_thread_at(index);
        if (owner)
            seq_then = hsr_seq_at(owner, f->clock);
    }
    uint64_t between = (seq_then - born) & HSR_SEQ_MASK;
    int mine = f->t && f->t->index == 0;
    BUMP(r, mine, frees, 1);
    BUMP(r, mine, time_hist[bin_of(lifetime)], 1);
    BUMP(r, mine, between_hist[bin_of(between)], 1);
    if (between <= hsr_track.temp_between && (!hsr_track.temp_ns || lifetime <= hsr_track.temp_ns))
        BUMP(r, mine, temporaries, 1);
    hsr_split_add(&cur_bytes, f->t, -(int64_t)r->size);
}

static inline void freer_here(struct freer *f, const struct hsr_thread *t, uint64_t clock)
{
    f->t = t;
    f->clock = clock;
    f->index = t ? t->index : UINT32_MAX;
    f->seq = t ? atomic_load_explicit(&t->alloc_seq, memory_order_relaxed) : 0;
}

/* The block at address a freed (f): out of the table, its death counted, the heap
 * figure of f->t lowered. born_by, try_only: as hsr_slot_remove's. */
static inline __attribute__((always_inline)) void block_died(const struct freer *f, uint64_t a,
                                                             uint64_t born_by, int try_only)
{
    struct hsr_slot s;
    if (hsr_slot_remove(f->t, hsr_addr_hash(a), a, born_by, try_only, &s))
        return;  /* untracked, or counted already */
    struct hsr_track_rec *r = (struct hsr_track_rec *)(s.rec & ~(uintptr_t)1);
    record_death(f, &s, r);
    if (HSR_LIKELY(f->t))
        hsr_heap_count((struct hsr_thread *)f->t, -(int64_t)r->size, (int)(s.rec & 1));
    else
        hsr_heap_unowned(-(int64_t)r->size, (int)(s.rec & 1));
}

int hsr_track_dying(void *p, struct hsr_dying *d)
{
    /* the slot is likely cold (a block allocated long ago): fetch it while the
     * clock is read */
    uint64_t h = hsr_addr_hash((uint64_t)(uintptr_t)p);
    hsr_slot_prefetch(h);
    d->dying_clock = hsr_clock_raw();
    struct hsr_slot s;
    if (hsr_slot_remove(hsr_self, h, (uint64_t)(uintptr_t)p, UINT64_MAX, 0, &s))
        return -1;
    d->record = (void *)(s.rec & ~(uintptr_t)1);
    d->component = (int)(s.rec & 1);
    d->size = ((struct hsr_track_rec *)d->record)->size;
    d->born_clock = s.born;
    d->born_seq = s.seq;
    return 0;
}

void hsr_track_revive(struct hsr_dying *d)
{
    struct hsr_slot s = {(uint64_t)(uintptr_t)d->p, d->born_clock,
                        (uintptr_t)d->record | (d->component ? 1u : 0u), d->born_seq};
    struct hsr_slot dead;
    int put = hsr_slot_insert(hsr_self, hsr_addr_hash(s.addr), &s, &dead);
    if (put > 0)
        replaced_died(hsr_self, &dead, hsr_clock_raw());
    if (put < 0) {  /* cannot happen: its slot was just freed; but never lose it */
        struct hsr_track_rec *r = d->record;
        add(&untracked, 1);
        atomic_fetch_sub_explicit(&r->shared.allocs, 1, memory_order_relaxed);  /* the sum wraps back */
        hsr_split_add(&cur_bytes, hsr_self, -(int64_t)d->size);
    }
}

void hsr_track_dead(struct hsr_dying *d)
{
    struct freer f;
    freer_here(&f, hsr_self, d->dying_clock);
    struct hsr_slot s = {(uint64_t)(uintptr_t)d->p, d->born_clock, (uintptr_t)d->record,
                        d->born_seq};
    record_death(&f, &s, d->record);
}

/* ---- deferred deaths ----
 *
 * The side-table slot of a block allocated long ago is rarely in cache when the
 * block is freed, and waiting for it was a third of tracking's cost. So the free
 * of a block is counted HSR_FREED_RING frees of its thread later: the hook notes
 * the address, the clock and the thread's allocation number in the thread's ring,
 * starts fetching the slot, and counts the death of the ring's oldest entry
 * instead, whose slot has arrived meanwhile. The block itself goes to the
 * allocator at once, as it would without us: nothing is held back, the heap's
 * layout and usable sizes are the program's own.
 *
 * What the wait changes, and how it is kept exact:
 *   - lifetimes, allocations in between: from the clock and the number noted at
 *     the free; a block of another thread: that thread's number at the free, from
 *     its log of birth clocks (track_born_log.c);
 *   - the address given out again before the death is counted (a thread's next
 *     allocation of that size, often): the birth finds the dead block in the
 *     table and counts its death first, from its entry in the ring of its thread
 *     (looked up by address and birth time); the entry, when its turn comes,
 *     finds a block born after it at the address and leaves it alone;
 *   - the heap peak: a birth that would make a new maximum first counts its
 *     thread's ring (other threads' rings: up to HSR_FREED_RING blocks each may
 *     still count at a peak reached by several threads);
 *   - region boundaries and snapshots count the rings first (hsr_track_flush,
 *     hsr_track_settle), and an ending thread its own.
 * Only the ring's thread writes it; the others read it under its version (odd
 * while written). A death counted by another thread is not counted again: its
 * block is gone from the table when the entry's turn comes. */

/* Which thread's ring last took each address (by hash; table index + 1): a birth
 * that finds a dead block at its address looks in that ring before all others. */
#define FREER_HINTS 4096u
static _Atomic uint32_t freer_hint[FREER_HINTS];

static inline _Atomic uint32_t *hint_of(uint64_t h) { return &freer_hint[(h >> 20) % FREER_HINTS]; }

/* A ring entry, copied out. */
struct freed_copy {
    uint64_t addr, clock, seq;
};

static inline void ring_write_begin(struct hsr_freed_ring *q, uint64_t *v)
{
    *v = atomic_load_explicit(&q->version, memory_order_relaxed);
    atomic_store_explicit(&q->version, *v + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}

static inline void ring_write_end(struct hsr_freed_ring *q, uint64_t v)
{
    atomic_store_explicit(&q->version, v + 2, memory_order_release);
}

/* The ring's oldest entry, the next to be replaced (by its owner). */
static inline void ring_oldest(const struct hsr_freed_ring *q, struct freed_copy *old)
{
    const struct hsr_freed *e = &q->e[q->next];
    old->addr = atomic_load_explicit(&e->addr, memory_order_relaxed);
    old->clock = atomic_load_explicit(&e->clock, memory_order_relaxed);
    old->seq = atomic_load_explicit(&e->seq, memory_order_relaxed);
}

/* Replace the ring's oldest entry by (a, clock, seq), once its death is counted:
 * until then a birth at its address can still find it. */
static inline void ring_replace(struct hsr_freed_ring *q, uint64_t a, uint64_t clock, uint64_t seq)
{
    struct hsr_freed *e = &q->e[q->next];
    uint64_t v;
    ring_write_begin(q, &v);
    atomic_store_explicit(&e->addr, a, memory_order_relaxed);
    atomic_store_explicit(&e->clock, clock, memory_order_relaxed);
    atomic_store_explicit(&e->seq, seq, memory_order_relaxed);
    q->next = (q->next + 1) % HSR_FREED_RING;
    ring_write_end(q, v);
}

/* Entry i of another thread's ring, read whole; 0 if it was being written and
 * `patient` is 0 (a signal handler may have interrupted the writer). */
static int ring_read(const struct hsr_freed_ring *q, unsigned i, int patient, struct freed_copy *c)
{
    for (int tries = 0;; tries++) {
        uint64_t v = atomic_load_explicit(&q->version, memory_order_acquire);
        c->addr = atomic_load_explicit(&q->e[i].addr, memory_order_relaxed);
        c->clock = atomic_load_explicit(&q->e[i].clock, memory_order_relaxed);
        c->seq = atomic_load_explicit(&q->e[i].seq, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (!(v & 1) && v == atomic_load_explicit(&q->version, memory_order_relaxed))
            return 1;
        if (!patient || tries > 1000)
            return 0;
        sched_yield();
    }
}

void hsr_track_free(void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p, h = hsr_addr_hash(a);
    hsr_slot_prefetch(h);
    struct freer f;
    struct hsr_thread *t = hsr_self;
    if (HSR_UNLIKELY(!t))
        t = hsr_thread_attach();
    freer_here(&f, t, hsr_clock_raw());
    if (HSR_UNLIKELY(!t)) {
        block_died(&f, a, UINT64_MAX, 0);
        return;
    }
    struct freed_copy old;
    ring_oldest(&t->freed, &old);
    if (old.addr) {
        struct freer then = {t, old.clock, f.index, old.seq};
        block_died(&then, old.addr, old.clock, 0);
    }
    ring_replace(&t->freed, a, f.clock, f.seq);
    _Atomic uint32_t *hint = hint_of(h);
    if (atomic_load_explicit(hint, memory_order_relaxed) != t->index + 1)  /* no store: no line */
        atomic_store_explicit(hint, t->index + 1, memory_order_relaxed);   /* taken from others */
}

void hsr_track_flush(struct hsr_thread *t)
{
    struct freer f;
    freer_here(&f, t, 0);
    for (unsigned n = 0; n < HSR_FREED_RING; n++) {
        struct freed_copy old;
        ring_oldest(&t->freed, &old);
        if (old.addr) {
            f.clock = old.clock;
            f.seq = old.seq;
            block_died(&f, old.addr, old.clock, 0);
        }
        ring_replace(&t->freed, 0, 0, 0);
    }
}

/* The entry of dead's free in another thread's ring (its clock no earlier than the
 * block's birth) into *f; 0 if none. */
static int ring_find(const struct hsr_thread *o, const struct hsr_slot *dead, struct freer *f)
{
    for (unsigned i = 0; i < HSR_FREED_RING; i++) {
        struct freed_copy c;
        if (ring_read(&o->freed, i, 1, &c) && c.addr == dead->addr && c.clock >= dead->born) {
            f->clock = c.clock;
            f->index = o->index;
            f->seq = c.seq;
            return 1;
        }
    }
    return 0;
}

/* A birth found `dead` in the table at its address: count its death, from the
 * entry of its free in a ring (the thread's own first; the entry's clock no
 * earlier than the block's birth), else as of now. Returns the free's clock. */
static uint64_t replaced_died(struct hsr_thread *t, const struct hsr_slot *dead, uint64_t now)
{
    struct freer f = {t, now, UINT32_MAX, 0};
    struct hsr_freed_ring *q = &t->freed;
    int found = 0;
    /* newest first: an allocator hands out its most recently freed block first */
    for (unsigned n = 1; n <= HSR_FREED_RING && !found; n++) {
        struct hsr_freed *e = &q->e[(q->next + HSR_FREED_RING - n) % HSR_FREED_RING];
        if (atomic_load_explicit(&e->addr, memory_order_relaxed) != dead->addr)
            continue;
        uint64_t clock = atomic_load_explicit(&e->clock, memory_order_relaxed);
        if (clock < dead->born)
            continue;
        f.clock = clock;
        f.index = t->index;
        f.seq = atomic_load_explicit(&e->seq, memory_order_relaxed);
        /* one word: a reader that still sees the address finds the new block, born
         * after this clock, at it, and leaves it */
        atomic_store_explicit(&e->addr, 0, memory_order_relaxed);
        found = 1;
    }
    if (!found) {  /* another thread's free: the hinted ring first, then all */
        uint32_t hint = atomic_load_explicit(hint_of(hsr_addr_hash(dead->addr)),
                                             memory_order_relaxed);
        const struct hsr_thread *hinted =
            hint && hint - 1 != t->index ? hsr_thread_at(hint - 1) : NULL;
        if (hinted)
            found = ring_find(hinted, dead, &f);
        for (struct hsr_thread *o = hsr_threads_first(); o && !found; o = hsr_threads_next(o))
            if (o != t && o != hinted)
                found = ring_find(o, dead, &f);
    }
    struct hsr_track_rec *r = (struct hsr_track_rec *)(dead->rec & ~(uintptr_t)1);
    record_death(&f, dead, r);
    hsr_heap_count(t, -(int64_t)r->size, (int)(dead->rec & 1));
    return f.clock;
}

void hsr_track_settle(int from_signal)
{
    if (!hsr_track_on)
        return;
    /* A signal handler may have interrupted its thread inside a plain add to that
     * thread's own counters: it counts as no thread (atomic adds only; the heap
     * figure through hsr_heap_unowned). */
    struct hsr_thread *self = from_signal ? NULL : hsr_self;
    if (!self && !from_signal)
        self = hsr_thread_attach();
    for (struct hsr_thread *t = hsr_threads_first(); t; t = hsr_threads_next(t))
        for (unsigned i = 0; i < HSR_FREED_RING; i++) {
            struct freed_copy c;
            if (!ring_read(&t->freed, i, !from_signal, &c) || !c.addr)
                continue;
            struct freer f = {self, c.clock, t->index, c.seq};
            block_died(&f, c.addr, c.clock, from_signal);
        }
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
        hsr_warn(msg);
        return fallback;
    }
    return n;
}

static void fork_prepare(void)
{
    hsr_track_records_lock();
    hsr_track_table_lock();
}

static void fork_parent(void)
{
    hsr_track_table_unlock();
    hsr_track_records_unlock();
}

/* The child starts from zero, as its counts do: the parent's blocks it inherited
 * are forgotten (their frees are not found), the records emptied. */
static void fork_child(void)
{
    hsr_track_table_clear();
    hsr_track_records_clear();
    /* rings: a thread of the parent may have been writing one (version odd) */
    for (struct hsr_thread *t = hsr_threads_first(); t; t = hsr_threads_next(t))
        memset(&t->freed, 0, sizeof t->freed);
    memset(freer_hint, 0, sizeof freer_hint);
    atomic_store(&untracked, 0);
    hsr_split_reset(&cur_bytes);
    atomic_store(&max_bytes, 0);
    atomic_store(&max_ns, 0);
    atomic_store(&peak_pending, 0);
}

/* From the first allocation on (hooks.c calls this when it first resolves the
 * allocator, before any constructor), and at the latest from our constructor. */
__attribute__((constructor(101))) void hsr_tracking_init(void)
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
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    /* the temporary's bounds are the trace's too */
    hsr_track.temp_between = env_number("HEAPSCOPE_TEMP_BETWEEN", 0, 0, (1ull << 40) - 1);
    hsr_track.temp_ns = env_number("HEAPSCOPE_TEMP_NS", 0, 0, UINT64_MAX);
    hsr_track.max_blocks = env_number("HEAPSCOPE_TRACK_MAX_BLOCKS", 8u << 20, 1, (1ull << 40) - 1);
    if (!track) {
        hsr_guard = saved_guard;
        return;
    }
    if (hsr_track_records_init()) {
        hsr_warn("cannot map the tracking tables: tracking off");
    } else {
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        hsr_fast_clock_init();
        hsr_track_on = 1;
        hsr_heap_watch = 1;
    }
    hsr_guard = saved_guard;
}
