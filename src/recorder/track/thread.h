/*
 * thread.h — a thread's tracking state, hanging off its thread record
 * (count/thread.h) and made on its first tracked birth or free (thread.c): its
 * allocation count, its last frees (deferred.c) and its log of birth clocks
 * (born_log.c). Kept when a new thread adopts the record, as the counts are.
 */
#ifndef HSR_TRACK_THREAD_H
#define HSR_TRACK_THREAD_H

#include "common.h"
#include "count/thread.h"

/* A thread's last frees of small blocks, their deaths counted a few frees later
 * (deferred.c). `version` is odd while the owner writes. */
struct hsr_freed_ring {
    _Atomic uint64_t version;
    unsigned next; /* the oldest entry, the next to go */
    struct hsr_freed {
        _Atomic uint64_t addr;  /* 0: empty */
        _Atomic uint64_t clock; /* raw clock at the free */
        _Atomic uint64_t seq;   /* the freeing table's allocation number then */
    } e[HSR_FREED_RING];
};

struct hsr_track_thread {
    /* allocations this record's threads made (only the owner writes) */
    _Atomic uint64_t alloc_seq;
    struct hsr_freed_ring freed; /* only the owner writes */
    /* the birth clock of each of the last allocations, by allocation number: a
     * death another thread counts late finds from it the number this record had
     * reached at the free (born_log.c). Only the owner writes. */
    struct hsr_born_log {
        _Atomic uint64_t seq, clock;
    } born_log[HSR_BORN_LOG];
    /* the raw clock at which each epoch (2^20 allocations) of this table began, for the
     * compact side table's allocation numbers (stamps.h): epochs 1 .. epochs - 1 are
     * logged, in chunks; only the owner writes. epochs_lost: a chunk could not be
     * mapped, and this table's blocks go to the wide table from then on. */
    _Atomic uint64_t epochs;
    int epochs_lost;
    _Atomic(uint64_t *) epoch_chunk[HSR_EPOCH_CHUNKS];
    /* the address windows (track/windows.h) of this thread's last blocks, by window number
     * modulo HSR_WINDOW_MEMO: a block's key and hashes without the dictionary (table.h) */
    struct hsr_window_memo {
        uint64_t window; /* W + 1; 0: none */
        uint32_t id;     /* its id | its table shard << 20 */
        uint32_t h1;     /* the hash of its first buckets */
    } windows[HSR_WINDOW_MEMO];
};

HSR_HIDDEN struct hsr_track_thread *hsr_track_thread_new(struct hsr_thread *t);

/* The calling thread's state (t: its record), made if new; NULL when out of memory. */
static inline struct hsr_track_thread *hsr_track_thread_of(struct hsr_thread *t)
{
    struct hsr_track_thread *s = atomic_load_explicit(&t->track, memory_order_relaxed);
    return HSR_LIKELY(s) ? s : hsr_track_thread_new(t);
}

/* Another thread's state, as it is: NULL if that thread has tracked nothing. */
static inline struct hsr_track_thread *hsr_track_thread_peek(const struct hsr_thread *t)
{
    return atomic_load_explicit(&((struct hsr_thread *)t)->track, memory_order_acquire);
}

/* born_log.c: the allocation number record o had reached at raw clock `clock`
 * (its number now if its log no longer reaches back that far) */
HSR_HIDDEN uint64_t hsr_seq_at(const struct hsr_thread *o, uint64_t clock);

#endif
