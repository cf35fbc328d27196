/*
 * events.c — event trace mode (HEAPSCOPE_TRACE=1): every allocation and free, in
 * order, into per-thread buffers that writer.c compresses into the file.
 *
 * Order: every event takes a number from one process-wide sequence (an alloc
 * after the real allocation returned, a free before the real free), so a reader
 * merging the threads' streams by number sees a freed address before it is
 * handed out again. A stack trace type gets an id the first time an event of
 * its thread refers to it, and its definition goes into that thread's stream
 * just before, so it is always defined before use.
 *
 * A thread's buffer is guarded by a lock that only a snapshot ever contends for
 * (it takes the partly filled buffers of all threads, so the file holds every
 * event up to the snapshot). Both are the thread's trace state (buffers.h),
 * hanging off its thread record.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/fast_clock.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "count/counting.h"
#include "count/heap.h"
#include "count/thread.h"
#include "hooks/blocks.h"
#include "stacks/stacks.h"
#include "trace/buffers.h"
#include "trace/trace.h"

int hsr_trace_on;
static _Atomic uint64_t trace_seq;
static _Atomic uint32_t next_stack_id; /* 0 = no stack */
static _Atomic int closed;             /* after the last snapshot: no more events */

/* ---- varints ---- */

static inline uint8_t *put_varint(uint8_t *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

static inline uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

/* ---- the calling thread's buffer ---- */

static int lock_buffer(struct hsr_trace_thread *s, int bounded)
{
    for (int n = 0; atomic_exchange_explicit(&s->lock, 1, memory_order_acquire); n++) {
        if (bounded && n > 200000)
            return -1;
        if (n > 64)
            sched_yield();
    }
    return 0;
}

static void unlock_buffer(struct hsr_trace_thread *s)
{
    atomic_store_explicit(&s->lock, 0, memory_order_release);
}

/* Made by its thread, or by a fork for every thread (fork_prepare): whoever
 * publishes first wins. */
struct hsr_trace_thread *hsr_trace_thread_new(struct hsr_thread *t)
{
    struct hsr_trace_thread *fresh = hsr_map(sizeof *fresh), *none = NULL;
    if (!fresh)
        return NULL;
    if (atomic_compare_exchange_strong(&t->trace, &none, fresh))
        return fresh;
    hsr_unmap(fresh, sizeof *fresh);
    return none;
}

/* The thread's buffer with room for one more event (locked); NULL: no state. */
static struct hsr_trace_buf *buffer_for_event(struct hsr_trace_thread **state)
{
    struct hsr_thread *t = hsr_self;
    if (HSR_UNLIKELY(!t) && !(t = hsr_thread_attach()))
        return NULL;
    struct hsr_trace_thread *s = hsr_trace_thread_of(t);
    if (HSR_UNLIKELY(!s))
        return NULL;
    *state = s;
    lock_buffer(s, 0);
    struct hsr_trace_buf *b = s->buf;
    if (HSR_UNLIKELY(!b || b->len + TRACE_MAX_EVENT > HSR_TRACE_BUFFER_BYTES)) {
        if (b)
            hsr_trace_hand_over(b);
        b = hsr_trace_take_empty();
        b->thread = t->index;
        s->buf = b;
    }
    return b;
}

static void event_head(struct hsr_trace_buf *b, uint8_t **o, unsigned tag, uint64_t seq,
                       uint64_t ns, uint64_t addr)
{
    if (b->events == 0)
        b->first_seq = seq;
    b->last_seq = seq;
    b->events++;
    uint8_t *p = put_varint(*o, (seq - b->prev_seq) << 2 | tag);
    p = put_varint(p, ns - b->prev_ns);
    p = put_varint(p, zigzag((int64_t)(addr - b->prev_addr)));
    b->prev_seq = seq;
    b->prev_ns = ns;
    b->prev_addr = addr;
    *o = p;
}

/* The trace id of a stack trace type; its definition written first if new. */
static uint32_t stack_id(struct hsr_trace_buf *b, uint8_t **o, struct hsr_stack_entry *e,
                         uint32_t region, uint64_t size)
{
    uint32_t *slot = hsr_stack_entry_trace_id(e);
    if (HSR_LIKELY(*slot))
        return *slot;
    uint32_t id = atomic_fetch_add(&next_stack_id, 1) + 1;
    *slot = id; /* the entry belongs to this thread's table */
    uint32_t depth;
    const uint64_t *frames = hsr_stack_entry_frames(e, &depth);
    uint8_t *p = *o;
    *p++ = HS_EVENT_STACK; /* a head of number delta 0, tag 3 */
    p = put_varint(p, id);
    p = put_varint(p, region);
    p = put_varint(p, size);
    p = put_varint(p, depth);
    memcpy(p, frames, (size_t)depth * 8);
    *o = p + (size_t)depth * 8;
    (void)b;
    return id;
}

void hsr_trace_alloc(void *p, uint64_t size, struct hsr_site site, int64_t extra)
{
    if (HSR_UNLIKELY(atomic_load_explicit(&closed, memory_order_relaxed)))
        return;
    struct hsr_trace_thread *s;
    struct hsr_trace_buf *b = buffer_for_event(&s);
    if (!b)
        return;
    uint64_t seq = atomic_fetch_add_explicit(&trace_seq, 1, memory_order_relaxed) + 1;
    uint64_t ns = hsr_clock_ns();
    uint8_t *o = b->data + b->len;
    uint32_t id = site.type ? stack_id(b, &o, site.type, site.region, size) : 0;
    event_head(b, &o, HS_EVENT_ALLOC, seq, ns, (uint64_t)(uintptr_t)p);
    o = put_varint(o, size);
    o = put_varint(o, id);
    o = put_varint(o, site.region);
    o = put_varint(o, extra > 0 ? (uint64_t)extra : 0);
    b->len = (size_t)(o - b->data);
    unlock_buffer(s);
}

void hsr_trace_dying(struct hsr_dying *d)
{
    d->trace_seq = atomic_fetch_add_explicit(&trace_seq, 1, memory_order_relaxed) + 1;
    d->trace_ns = hsr_clock_ns();
}

void hsr_trace_free(struct hsr_dying *d)
{
    if (HSR_UNLIKELY(atomic_load_explicit(&closed, memory_order_relaxed)))
        return;
    struct hsr_trace_thread *s;
    struct hsr_trace_buf *b = buffer_for_event(&s);
    if (!b)
        return;
    uint8_t *o = b->data + b->len;
    event_head(b, &o, HS_EVENT_FREE, d->trace_seq, d->trace_ns, (uint64_t)(uintptr_t)d->p);
    b->len = (size_t)(o - b->data);
    unlock_buffer(s);
}

/* ---- snapshots ---- */

/* Every thread's partly filled buffer to the writer, then all of them into the
 * file before the snapshot. final: the process ends (exit, exec, SIGTERM/SIGINT):
 * later events are not recorded. */
void hsr_trace_flush(int final, int from_signal)
{
    if (!hsr_trace_on)
        return;
    if (final)
        atomic_store(&closed, 1);
    for (struct hsr_thread *t = hsr_threads_first(); t; t = hsr_threads_next(t)) {
        struct hsr_trace_thread *s = atomic_load_explicit(&t->trace, memory_order_acquire);
        if (!s || lock_buffer(s, from_signal))
            continue; /* no buffer; or a signal on top of this thread's own event: it stays */
        struct hsr_trace_buf *b = s->buf;
        if (b && b->events) {
            s->buf = NULL;
            hsr_trace_hand_over(b);
        }
        unlock_buffer(s);
    }
    hsr_trace_drain(from_signal);
}

/* ---- start, fork ---- */

/* Every thread's buffer locked, its state made first if it has none: a thread
 * that made its own during the fork would find it unlocked by fork_parent. */
static void fork_prepare(void)
{
    for (struct hsr_thread *t = hsr_threads_first(); t; t = hsr_threads_next(t)) {
        struct hsr_trace_thread *s = hsr_trace_thread_of(t);
        if (s)
            lock_buffer(s, 0);
    }
}

static void fork_parent(void)
{
    for (struct hsr_thread *t = hsr_threads_first(); t; t = hsr_threads_next(t)) {
        struct hsr_trace_thread *s = atomic_load_explicit(&t->trace, memory_order_acquire);
        if (s)
            unlock_buffer(s);
    }
}

/* The child's file is new: its trace starts empty (the parent's buffered events
 * are the parent's), stack ids from 1 again (its stack tables are emptied). */
static void fork_child(void)
{
    for (struct hsr_thread *t = hsr_threads_first(); t; t = hsr_threads_next(t)) {
        struct hsr_trace_thread *s = atomic_load_explicit(&t->trace, memory_order_acquire);
        if (s) {
            s->buf = NULL;
            unlock_buffer(s);
        }
    }
    hsr_trace_writer_reset();
    atomic_store(&trace_seq, 0);
    atomic_store(&next_stack_id, 0);
    atomic_store(&closed, 0);
}

void hsr_trace_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    const char *on = getenv("HEAPSCOPE_TRACE");
    if (!on || !*on || strcmp(on, "0") == 0)
        return;
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    if (hsr_trace_writer_init() == 0) {
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        hsr_fast_clock_init();
        hsr_trace_on = 1;
        hsr_heap_watch = 1;
    } else {
        hsr_warn("cannot map the trace buffers: trace off");
    }
    hsr_guard = saved_guard;
}
