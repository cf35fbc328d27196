/*
 * rows.c — the figures of the sampled blocks, added up per (region, size, stack type):
 * a row per stack type the samples hit (the same call path seen by two threads is two
 * types, as in STACK_TYPES: the reader adds them up), one per (region, size) for
 * samples without a stack. A fixed table (HSR_ACCESS_ROWS), found by a hash; a sample
 * that finds no room is counted in rows_lost, never dropped silently. Under the lock.
 */
#include <string.h>

#include "access/internal.h"
#include "core/pool.h"

#define INDEX_SLOTS (2u * HSR_ACCESS_ROWS)

static struct hsr_access_row *rows; /* id 0 unused */
static uint32_t *index_;            /* hash slot -> row id, 0 empty */
static uint32_t used = 1;
_Atomic uint64_t hsr_access_rows_lost;

int hsr_access_rows_init(void)
{
    rows = hsr_map((size_t)HSR_ACCESS_ROWS * sizeof *rows);
    index_ = hsr_map((size_t)INDEX_SLOTS * sizeof *index_);
    return rows && index_ ? 0 : -1;
}

static uint32_t hash(const struct hsr_stack_entry *type, uint32_t region, uint64_t size)
{
    uint64_t h = ((uintptr_t)type ^ (size * 0x9E3779B97F4A7C15ull)) + region;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    return (uint32_t)(h >> 32);
}

uint32_t hsr_access_rows_find(const struct hsr_stack_entry *type, uint32_t region, uint64_t size)
{
    if (!rows)
        return 0;
    for (uint32_t i = hash(type, region, size);; i++) {
        uint32_t *slot = &index_[i % INDEX_SLOTS];
        if (*slot) {
            struct hsr_access_row *r = &rows[*slot];
            if (r->type == type && r->region == region && r->size == size)
                return *slot;
            continue;
        }
        if (used >= HSR_ACCESS_ROWS) {
            atomic_fetch_add(&hsr_access_rows_lost, 1);
            return 0;
        }
        struct hsr_access_row *r = &rows[used];
        r->type = type;
        r->region = region;
        r->size = size;
        r->used = 1;
        *slot = used;
        return used++;
    }
}

struct hsr_access_row *hsr_access_rows_at(uint32_t id)
{
    return id && id < used ? &rows[id] : NULL;
}

uint32_t hsr_access_rows_count(void) { return used; }

/* A child's figures start at zero, as its counts do. */
void hsr_access_rows_after_fork_child(void)
{
    if (!rows)
        return;
    memset(rows, 0, (size_t)used * sizeof *rows);
    memset(index_, 0, (size_t)INDEX_SLOTS * sizeof *index_);
    used = 1;
    atomic_store(&hsr_access_rows_lost, 0);
}
