/*
 * buffers.h — the event trace's buffers, shared by events.c (events into
 * per-thread buffers) and writer.c (the writer thread, compression, chunks).
 *
 * Bounded memory: HSR_TRACE_BUFFERS buffers of HSR_TRACE_BUFFER_BYTES in all. A thread
 * fills its own buffer and hands it to the writer when full; when no empty
 * buffer is left it waits for the writer (back-pressure): no event is dropped.
 */
#ifndef HSR_TRACE_BUFFERS_H
#define HSR_TRACE_BUFFERS_H

#include "common.h"
#include "count/thread.h"
#include "trace/trace.h"

#define TRACE_MAX_EVENT (16u + 6u * 10u + HSR_MAX_DEPTH * 8u) /* a stack definition */

/* Event tags in a buffer: HS_EVENT_* (profile_format.h, TRACE_EVENTS) */

struct hsr_trace_buf {
    struct hsr_trace_buf *next; /* in the free list or the full queue */
    uint32_t thread, events;    /* table index of the producing thread */
    uint64_t first_seq, last_seq;
    uint64_t prev_seq, prev_ns, prev_addr; /* delta bases */
    size_t len;
    uint8_t data[HSR_TRACE_BUFFER_BYTES];
};

/* A thread's trace state, hanging off its record (count/thread.h): its buffer,
 * and the buffer's lock (contended by snapshots only). Made on first use, by the
 * thread or by a fork (which locks every thread's buffer). */
struct hsr_trace_thread {
    _Atomic int lock;
    struct hsr_trace_buf *buf;
};

HSR_HIDDEN struct hsr_trace_thread *hsr_trace_thread_new(struct hsr_thread *t);

/* t's trace state, made if new; NULL when out of memory. */
static inline struct hsr_trace_thread *hsr_trace_thread_of(struct hsr_thread *t)
{
    struct hsr_trace_thread *s = atomic_load_explicit(&t->trace, memory_order_acquire);
    return HSR_LIKELY(s) ? s : hsr_trace_thread_new(t);
}

/* writer.c */
HSR_HIDDEN struct hsr_trace_buf *hsr_trace_take_empty(void);  /* waits when none */
HSR_HIDDEN void hsr_trace_hand_over(struct hsr_trace_buf *b); /* full: to the writer */
/* Write every handed-over buffer now, from this thread (a snapshot), and wait
 * for the writer's buffer in progress. raw: do not compress (signal handler). */
HSR_HIDDEN void hsr_trace_drain(int raw);
HSR_HIDDEN void hsr_trace_writer_reset(void); /* fork child */
HSR_HIDDEN int hsr_trace_writer_init(void);

#endif
