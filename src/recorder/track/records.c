/*
 * records.c — making tracking's records, the list of all of them (which
 * snapshots and the heap peak walk), and the records around fork. Lookups are in
 * records.h.
 */
#define _GNU_SOURCE
#include <string.h>

#include "core/pool.h"
#include "stacks/stacks.h"
#include "track/records.h"
#include "track/table.h"
#include "track/tracking.h"

struct hsr_size_slot *hsr_size_slots;
static _Atomic int size_lock;
static struct hsr_track_rec *_Atomic records; /* every record, newest first */
/* Records by number, for the compact side table's slots (table.h): pages touched as
 * records come. Numbers from 1; past HSR_CS_RECORDS a record has none (0) and its
 * blocks go to the wide table. */
struct hsr_track_rec **hsr_track_rec_by_id;
static _Atomic uint32_t next_id = 1;

struct hsr_track_rec *hsr_track_records(void)
{
    return atomic_load_explicit(&records, memory_order_acquire);
}

int hsr_track_records_init(void)
{
    hsr_size_slots = hsr_map((size_t)HSR_SIZE_SLOTS * sizeof *hsr_size_slots);
    hsr_track_rec_by_id = hsr_map((size_t)HSR_CS_RECORDS * sizeof *hsr_track_rec_by_id);
    return hsr_size_slots && hsr_track_rec_by_id ? 0 : -1;
}

static struct hsr_track_rec *record_new(uint32_t region, uint64_t size, uint32_t depth,
                                        const uint64_t *frames)
{
    /* on a line boundary, as its counter sets are (tracking.h) */
    char *raw = hsr_pool_alloc(sizeof(struct hsr_track_rec) + 63);
    if (!raw)
        return NULL;
    struct hsr_track_rec *r = (struct hsr_track_rec *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    atomic_fetch_add(&hsr_track_table_bytes, (int64_t)sizeof *r + 63);
    r->region = region;
    r->size = size;
    r->depth = depth;
    r->frames = frames;
    uint32_t id = atomic_fetch_add(&next_id, 1);
    if (id < HSR_CS_RECORDS) {
        r->id = id;
        hsr_track_rec_by_id[id] = r; /* before the record is used: published with it */
    }
    struct hsr_track_rec *head = atomic_load(&records);
    do
        r->next = head;
    while (!atomic_compare_exchange_weak(&records, &head, r));
    return r;
}

/* Not found without the lock: look again under it, and add it. */
__attribute__((noinline)) struct hsr_track_rec *hsr_size_record_add(uint32_t region, uint64_t size)
{
    uint64_t key = size + 1, h = hsr_size_hash(region, key);
    struct hsr_track_rec *r = NULL;
    hsr_spin_lock(&size_lock);
    for (uint64_t i = h, probes = 0; probes < HSR_SIZE_SLOTS; i++, probes++) {
        struct hsr_size_slot *s = &hsr_size_slots[i & (HSR_SIZE_SLOTS - 1)];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == key && s->region == region) {
            r = atomic_load_explicit(&s->rec, memory_order_acquire);
            break;
        }
        if (k)
            continue;
        r = record_new(region, size, 0, NULL);
        if (r) {
            atomic_fetch_add(&hsr_track_table_bytes, (int64_t)sizeof *s);
            s->region = region;
            atomic_store_explicit(&s->rec, r, memory_order_release);
            atomic_store_explicit(&s->key, key, memory_order_release);
        }
        break;
    }
    hsr_spin_unlock(&size_lock);
    return r; /* NULL: a million distinct (region, size) pairs */
}

/* Only the type's owner thread makes its record, so no lock. */
__attribute__((noinline)) struct hsr_track_rec *hsr_type_record_new(struct hsr_stack_entry *e,
                                                                    uint32_t region, uint64_t size)
{
    uint32_t depth;
    const uint64_t *frames = hsr_stack_entry_frames(e, &depth);
    struct hsr_track_rec *r = record_new(region, size, depth, frames);
    if (r)
        atomic_store_explicit(hsr_stack_entry_slot(e), r, memory_order_release);
    return r;
}

void hsr_track_records_lock(void) { hsr_spin_lock(&size_lock); }
void hsr_track_records_unlock(void) { hsr_spin_unlock(&size_lock); }

/* The child of a fork starts from zero, as its counts do. */
void hsr_track_records_clear(void)
{
    hsr_spin_unlock(&size_lock);
    for (struct hsr_track_rec *r = hsr_track_records(); r; r = r->next) {
        struct hsr_track_rec *next = r->next;
        uint32_t region = r->region, depth = r->depth, id = r->id;
        uint64_t size = r->size;
        const uint64_t *frames = r->frames;
        memset(r, 0, sizeof *r);
        r->next = next;
        r->id = id;
        r->region = region;
        r->depth = depth;
        r->size = size;
        r->frames = frames;
    }
}
