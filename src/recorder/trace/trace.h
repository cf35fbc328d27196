/*
 * trace.h — event trace mode (HEAPSCOPE_TRACE=1), as the rest of the recorder
 * sees it: every allocation and free, numbered, into per-thread buffers
 * (events.c) that a writer thread compresses into the file (writer.c). The
 * buffers and their per-thread state: buffers.h.
 */
#ifndef HSR_TRACE_H
#define HSR_TRACE_H

#include "common.h"

struct hsr_site;
struct hsr_dying;

extern HSR_HIDDEN int hsr_trace_on;
HSR_HIDDEN void hsr_trace_init(void); /* HEAPSCOPE_TRACE: idempotent */
/* Before a snapshot: every buffered event into the file. final: the process ends. */
HSR_HIDDEN void hsr_trace_flush(int final, int from_signal);
/* the events, for hooks/blocks.c */
HSR_HIDDEN void hsr_trace_alloc(void *p, uint64_t size, struct hsr_site site, int64_t extra);
HSR_HIDDEN void hsr_trace_dying(struct hsr_dying *d);
HSR_HIDDEN void hsr_trace_free(struct hsr_dying *d);

#endif
