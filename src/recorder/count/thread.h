/*
 * thread.h — the thread record: one per thread, mmap'd on its first allocation
 * and adopted by a new thread once its owner has ended (threads.c). It holds the
 * thread's counts (counting.h); every other subsystem
 * keeps its own per-thread state in a struct of its own, hanging off the record
 * and made by that subsystem on first use:
 *
 *   stacks   struct hsr_stack_table    stack trace types (stacks/stacks.c)
 *   track    struct hsr_track_thread   freed ring, birth log (track/thread.h)
 *   trace    struct hsr_trace_thread   event buffer and its lock (trace/buffers.h)
 *
 * so the hot path's header knows none of them.
 */
#ifndef HSR_THREAD_H
#define HSR_THREAD_H

#include "common.h"
#include "core/tls.h"

struct hsr_region_counts;
struct hsr_size_table;
struct hsr_stack_table;
struct hsr_track_thread;
struct hsr_trace_thread;

struct hsr_thread {
    struct hsr_thread *next; /* list of all records, append-only */
    _Atomic int in_use;      /* 0 idle, 1 in use, 2 its thread is ending (owner_tid) */
    int owner_tid;
    uint32_t index;                         /* hsr_thread_at; kept on adoption */
    struct hsr_size_table *_Atomic large;   /* counters.c: sizes >= HSR_SMALL_SIZES */
    struct hsr_stack_table *_Atomic stacks; /* the subsystems' own state, see above */
    struct hsr_track_thread *_Atomic track;
    struct hsr_trace_thread *_Atomic trace;
    struct hsr_region_counts *_Atomic regions[HSR_MAX_REGIONS]; /* counting.h */
};

/* hsr_self: the calling thread's record, NULL until attached (core/tls.h) */
HSR_HIDDEN struct hsr_thread *hsr_thread_attach(void);
HSR_HIDDEN void hsr_threads_init(void);             /* the thread-exit key */
HSR_HIDDEN void hsr_threads_after_fork_child(void); /* all records but ours handed back */
HSR_HIDDEN void hsr_thread_stand_in(void);          /* this thread's record is not a thread seen */
HSR_HIDDEN uint64_t hsr_threads_seen(void);
/* every record (the merge, tracking, the trace) */
HSR_HIDDEN struct hsr_thread *hsr_threads_first(void);
HSR_HIDDEN struct hsr_thread *hsr_threads_next(struct hsr_thread *t);
HSR_HIDDEN struct hsr_thread *hsr_thread_at(uint32_t index); /* NULL if none */
HSR_HIDDEN struct hsr_stack_table *hsr_thread_stacks(struct hsr_thread *t);
HSR_HIDDEN struct hsr_stack_table **hsr_thread_stacks_slot(struct hsr_thread *t);

#endif
