/*
 * blocks.c — each block's birth and death, as the hooks report them (blocks.h),
 * passed on to the event trace (trace/events.c), tracking (track/) and heap
 * accounting (count/heap.c).
 *
 * The heap figure's measure: requested bytes of tracked blocks when tracking is
 * on (the side table remembers each block's size and component flag), otherwise
 * usable bytes (malloc_usable_size at birth and at death).
 */
#define _GNU_SOURCE
#include "hooks/blocks.h"
#include "count/counting.h"
#include "count/heap.h"
#include "count/regions.h"
#include "trace/trace.h"
#include "track/track.h"

void hsr_block_born(void *p, uint64_t size, struct hsr_site site)
{
    int component = hsr_place.in.component != 0;
    int64_t usable = -1;
    if (hsr_trace_on) {
        usable = hsr_heap_usable(p);
        hsr_trace_alloc(p, size, site, usable - (int64_t)size);
    }
    if (hsr_track_on) {
        if (hsr_track_born(p, size, site, component) == 0)
            hsr_heap_add((int64_t)size, component);
        return;
    }
    hsr_heap_add(usable >= 0 ? usable : hsr_heap_usable(p), component);
}

void hsr_block_dying(void *p, struct hsr_dying *d)
{
    d->p = p;
    d->record = NULL;
    if (hsr_trace_on)
        hsr_trace_dying(d);
    if (hsr_track_on) {
        d->bytes = 0;
        if (hsr_track_dying(p, d) == 0)
            d->bytes = (int64_t)d->size;
        return;
    }
    d->bytes = hsr_heap_usable(p);
    d->component = hsr_place.in.component != 0;
}

void hsr_block_dead(struct hsr_dying *d)
{
    if (hsr_trace_on)
        hsr_trace_free(d);
    if (d->record)
        hsr_track_dead(d);
    if (d->bytes)
        hsr_heap_add(-d->bytes, d->component);
}

void hsr_block_revive(struct hsr_dying *d)
{
    if (d->record)
        hsr_track_revive(d); /* nothing was counted yet: back into the table */
    /* the trace: its free event was not written; its number stays unused */
}
