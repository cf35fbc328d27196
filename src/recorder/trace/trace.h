/*
 * trace.h — event trace mode (HEAPSCOPE_TRACE=1), shared by trace.c (events into
 * per-thread buffers) and trace_writer.c (the writer thread, compression, chunks).
 *
 * Bounded memory: TRACE_BUFFERS buffers of TRACE_BUFFER_BYTES in all. A thread
 * fills its own buffer and hands it to the writer when full; when no empty
 * buffer is left it waits for the writer (back-pressure): no event is dropped.
 */
#ifndef HSR_TRACE_H
#define HSR_TRACE_H

#include "blocks.h"
#include "recorder.h"

#define TRACE_BUFFER_BYTES (256u << 10)
#define TRACE_BUFFERS 32u
#define TRACE_MAX_EVENT (16u + 6u * 10u + HSR_MAX_DEPTH * 8u)  /* a stack definition */

/* Event tags in a buffer (layout: profile_format.h, TRACE_EVENTS) */
enum { TRACE_ALLOC = 1, TRACE_FREE = 2, TRACE_STACK = 3 };

struct hsr_trace_buf {
    struct hsr_trace_buf *next;       /* in the free list or the full queue */
    uint32_t thread, events;         /* table index of the producing thread */
    uint64_t first_seq, last_seq;
    uint64_t prev_seq, prev_ns, prev_addr;  /* delta bases */
    size_t len;
    uint8_t data[TRACE_BUFFER_BYTES];
};

/* trace_writer.c */
HSR_HIDDEN struct hsr_trace_buf *hsr_trace_take_empty(void);   /* waits when none */
HSR_HIDDEN void hsr_trace_hand_over(struct hsr_trace_buf *b);  /* full: to the writer */
/* Write every handed-over buffer now, from this thread (a snapshot), and wait
 * for the writer's buffer in progress. raw: do not compress (signal handler). */
HSR_HIDDEN void hsr_trace_drain(int raw);
HSR_HIDDEN void hsr_trace_writer_reset(void);                 /* fork child */
HSR_HIDDEN int hsr_trace_writer_init(void);

#endif
