/*
 * records.h — tracking mode's records (struct hsr_track_rec, tracking.h):
 * one per stack trace type (the sizes and regions whose stacks are captured: the
 * record hangs off the type's entry in stacks/stacks.c) and one per (region, size) for
 * every other block. The lookups the hooks make at each birth are inline; making
 * a record, the list of all of them and the fork handlers are in records.c.
 *
 * Per (region, size): one open-addressing table for all threads (a million
 * slots, 24 MiB of address space, touched only where used), read without lock,
 * added to under one.
 */
#ifndef HSR_TRACK_RECORDS_H
#define HSR_TRACK_RECORDS_H

#include "stacks/stacks.h"
#include "track/tracking.h"

#define HSR_SIZE_SLOTS (1u << 20)
struct hsr_size_slot {
    _Atomic uint64_t key; /* size + 1; 0 = empty */
    uint32_t region;
    struct hsr_track_rec *_Atomic rec;
};
extern HSR_HIDDEN struct hsr_size_slot *hsr_size_slots;

/* records.c */
HSR_HIDDEN int hsr_track_records_init(void); /* -1: no memory for the size table */
HSR_HIDDEN struct hsr_track_rec *hsr_size_record_add(uint32_t region, uint64_t size);
HSR_HIDDEN struct hsr_track_rec *hsr_type_record_new(struct hsr_stack_entry *e, uint32_t region,
                                                     uint64_t size);
HSR_HIDDEN void hsr_track_records_lock(void); /* around fork */
HSR_HIDDEN void hsr_track_records_unlock(void);
HSR_HIDDEN void hsr_track_records_clear(void); /* the child: every count to zero, unlocked */

static inline uint64_t hsr_size_hash(uint32_t region, uint64_t key)
{
    uint64_t h = (key ^ ((uint64_t)region << 40)) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 31);
}

/* The record of (region, size), made if new; NULL when the table is full. */
static inline struct hsr_track_rec *hsr_size_record(uint32_t region, uint64_t size)
{
    uint64_t key = size + 1, h = hsr_size_hash(region, key);
    for (uint64_t i = h; i - h < HSR_SIZE_SLOTS; i++) {
        struct hsr_size_slot *s = &hsr_size_slots[i & (HSR_SIZE_SLOTS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (HSR_LIKELY(k == key && s->region == region))
            return atomic_load_explicit(&s->rec, memory_order_acquire);
        if (!k)
            break;
    }
    return hsr_size_record_add(region, size);
}

/* The record of a stack trace type, made by the type's owner thread if new. */
static inline struct hsr_track_rec *hsr_type_record(struct hsr_stack_entry *e, uint32_t region,
                                                    uint64_t size)
{
    struct hsr_track_rec *r = atomic_load_explicit(hsr_stack_entry_slot(e), memory_order_acquire);
    return HSR_LIKELY(r) ? r : hsr_type_record_new(e, region, size);
}

#endif
