/*
 * track.h — tracking mode (HEAPSCOPE_TRACK=1), as the rest of the recorder sees
 * it: a side table of live blocks and, per stack trace type (selected sizes) or
 * per size (the others), lifetimes, temporaries, blocks live at the peak and at
 * the snapshot (profile_format.h, TRACK_* chunks). Its records and figures:
 * tracking.h; its per-thread state: thread.h.
 */
#ifndef HSR_TRACK_H
#define HSR_TRACK_H

#include "common.h"

struct hsr_buf;
struct hsr_dying;
struct hsr_site;
struct hsr_thread;

extern HSR_HIDDEN int hsr_track_on;
HSR_HIDDEN void hsr_tracking_init(void);               /* HEAPSCOPE_TRACK*: idempotent */
HSR_HIDDEN void hsr_tracking_write(struct hsr_buf *b); /* TRACK_* chunks of a snapshot */

/* The common case of tracking mode (no trace), for hooks/blocks.h: the birth or
 * the whole death of a block in one call each, heap figure included (what
 * hsr_block_born, and hsr_block_dying + hsr_block_dead, do in several); the death
 * is counted a few frees later (deferred.c). */
HSR_HIDDEN void hsr_track_birth(void *p, uint64_t size, struct hsr_site site);
HSR_HIDDEN void hsr_track_free(void *p);
/* The same in steps, for hooks/blocks.c (the trace on, or a realloc). */
HSR_HIDDEN int hsr_track_born(void *p, uint64_t size, struct hsr_site site, int component);
HSR_HIDDEN int hsr_track_dying(void *p, struct hsr_dying *d); /* 0: it was tracked */
HSR_HIDDEN void hsr_track_dead(struct hsr_dying *d);
HSR_HIDDEN void hsr_track_revive(struct hsr_dying *d);

/* The calling thread's deferred frees processed and handed to the allocator
 * (not from a signal handler). */
HSR_HIDDEN void hsr_track_flush(struct hsr_thread *t);
/* Before a snapshot: every thread's deferred frees counted as deaths (their
 * blocks are handed to the allocator later, by their threads). From a signal
 * handler, those whose side-table shard is locked wait for the next snapshot. */
HSR_HIDDEN void hsr_track_settle(int from_signal);

#endif
