/*
 * deferred.c — tracking mode's deaths, counted a few frees late.
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
 *     its log of birth clocks (born_log.c);
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
 * block is gone from the table when the entry's turn comes. The ring is part of
 * the thread's tracking state (thread.h).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>

#include "core/fast_clock.h"
#include "count/heap.h"
#include "count/thread.h"
#include "track/death.h"
#include "track/table.h"
#include "track/thread.h"
#include "track/track.h"
#include "track/tracking.h"

/* Which thread's ring last took each address (by hash; table index + 1): a birth
 * that finds a dead block at its address looks in that ring before all others. */
static _Atomic uint32_t freer_hint[HSR_FREER_HINTS];

static inline _Atomic uint32_t *hint_of(uint64_t h)
{
    /* mixed again: the table's hash keeps nearby addresses together, hints spread them */
    return &freer_hint[((h * 0x9E3779B97F4A7C15ull) >> 40) % HSR_FREER_HINTS];
}

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
    struct freer f;
    struct hsr_thread *t = hsr_self;
    if (HSR_UNLIKELY(!t))
        t = hsr_thread_attach();
    hsr_slot_prefetch(t, a);
    freer_here(&f, t, hsr_clock_raw());
    struct hsr_track_thread *ts = t ? hsr_track_thread_of(t) : NULL;
    if (HSR_UNLIKELY(!ts)) {
        block_died(&f, a, UINT64_MAX, 0);
        return;
    }
    struct freed_copy old;
    ring_oldest(&ts->freed, &old);
    if (old.addr) {
        struct freer then = {t, old.clock, f.index, old.seq};
        block_died(&then, old.addr, old.clock, 0);
    }
    ring_replace(&ts->freed, a, f.clock, f.seq);
    _Atomic uint32_t *hint = hint_of(h);
    if (atomic_load_explicit(hint, memory_order_relaxed) != t->index + 1) /* no store: no line */
        atomic_store_explicit(hint, t->index + 1, memory_order_relaxed);  /* taken from others */
}

void hsr_track_flush(struct hsr_thread *t)
{
    struct hsr_track_thread *ts = hsr_track_thread_peek(t);
    if (!ts)
        return; /* nothing freed yet */
    struct freer f;
    freer_here(&f, t, 0);
    for (unsigned n = 0; n < HSR_FREED_RING; n++) {
        struct freed_copy old;
        ring_oldest(&ts->freed, &old);
        if (old.addr) {
            f.clock = old.clock;
            f.seq = old.seq;
            block_died(&f, old.addr, old.clock, 0);
        }
        ring_replace(&ts->freed, 0, 0, 0);
    }
}

/* The entry of dead's free in another thread's ring (its clock no earlier than the
 * block's birth) into *f; 0 if none. */
static int ring_find(const struct hsr_thread *o, const struct hsr_slot *dead, struct freer *f)
{
    const struct hsr_track_thread *os = hsr_track_thread_peek(o);
    for (unsigned i = 0; os && i < HSR_FREED_RING; i++) {
        struct freed_copy c;
        if (ring_read(&os->freed, i, 1, &c) && c.addr == dead->addr && c.clock >= dead->born) {
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
uint64_t hsr_track_replaced_died(struct hsr_thread *t, const struct hsr_slot *dead, uint64_t now)
{
    struct freer f = {t, now, UINT32_MAX, 0};
    struct hsr_track_thread *ts = hsr_track_thread_peek(t);
    struct hsr_freed_ring *q = ts ? &ts->freed : NULL;
    int found = 0;
    /* newest first: an allocator hands out its most recently freed block first */
    for (unsigned n = 1; q && n <= HSR_FREED_RING && !found; n++) {
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
    if (!found) { /* another thread's free: the hinted ring first, then all */
        uint32_t hint =
            atomic_load_explicit(hint_of(hsr_addr_hash(dead->addr)), memory_order_relaxed);
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
    for (struct hsr_thread *t = hsr_threads_first(); t; t = hsr_threads_next(t)) {
        const struct hsr_track_thread *ts = hsr_track_thread_peek(t);
        for (unsigned i = 0; ts && i < HSR_FREED_RING; i++) {
            struct freed_copy c;
            if (!ring_read(&ts->freed, i, !from_signal, &c) || !c.addr)
                continue;
            struct freer f = {self, c.clock, t->index, c.seq};
            block_died(&f, c.addr, c.clock, from_signal);
        }
    }
}

/* A fork child: a thread of the parent may have been writing its ring (version
 * odd); the child forgets the parent's blocks anyway (fork.c). */
void hsr_track_deferred_reset(void)
{
    for (struct hsr_thread *t = hsr_threads_first(); t; t = hsr_threads_next(t)) {
        struct hsr_track_thread *ts = hsr_track_thread_peek(t);
        if (ts)
            memset(&ts->freed, 0, sizeof ts->freed);
    }
    memset(freer_hint, 0, sizeof freer_hint);
}
