/*
 * stacks.h — call stacks of the selected allocations, per thread, as stack trace
 * types (stacks.c): capture, and the tables a dump reads. A thread's table hangs
 * off its thread record (struct hsr_thread.stacks, made on first capture).
 */
#ifndef HSR_STACKS_H
#define HSR_STACKS_H

#include "common.h"

struct hsr_thread;
struct hsr_stack_table;
struct hsr_stack_entry;

HSR_HIDDEN void hsr_stacks_init(int unwinder, unsigned depth);
/* Counts one allocation in its stack trace type; returns the type (stable: types
 * are never moved nor freed) or NULL when the table was full (lost). */
HSR_HIDDEN struct hsr_stack_entry *hsr_stack_record(struct hsr_thread *t, uint32_t region,
                                                    uint64_t size);
/* A type's frames, and a pointer-sized slot tracking keeps its record in. */
HSR_HIDDEN const uint64_t *hsr_stack_entry_frames(const struct hsr_stack_entry *e, uint32_t *depth);
HSR_HIDDEN void *_Atomic *hsr_stack_entry_slot(struct hsr_stack_entry *e);
HSR_HIDDEN uint32_t *hsr_stack_entry_trace_id(struct hsr_stack_entry *e); /* owner thread only */
HSR_HIDDEN void hsr_stacks_after_fork_child(void);
HSR_HIDDEN void hsr_stacks_report(void); /* HEAPSCOPE_UNWIND_STATS=1: one line on stderr */
HSR_HIDDEN uint64_t hsr_stacks_lost(void);
typedef void (*hsr_stack_fn)(void *ctx, uint32_t region, uint64_t size, uint32_t depth,
                             const uint64_t *frames, uint64_t count);
HSR_HIDDEN void hsr_stack_table_visit(struct hsr_stack_table *st, void *ctx, hsr_stack_fn fn);
HSR_HIDDEN void hsr_stack_table_clear(struct hsr_stack_table *st);

#endif
