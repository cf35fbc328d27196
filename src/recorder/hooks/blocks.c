/*
 * blocks.c — each block's birth and death, as the hooks report them (blocks.h),
 * passed on to the event trace (trace.c), tracking (tracking.c) and heap
 * accounting (heap_accounting.c).
 *
 * The heap figure's measure: requested bytes of tracked blocks when tracking is
 * on (the side table remembers each block's size and component flag), otherwise
 * usable bytes (malloc_usable_size at birth and at death).
 */
#define _GNU_SOURCE
#include "blocks.h"
#include "recorder.h"
#include "tracking.h"

int hs_heap_watch;

int hs_heap_measure_requested(void) { return hs_track_on; }

void hs_block_born(void *p, uint64_t size, struct hs_site site)
{
    int component = hs_place.in.component != 0;
    int64_t usable = -1;
    if (hs_trace_on) {
        usable = hs_heap_usable(p);
        hs_trace_alloc(p, size, site, usable - (int64_t)size);
    }
    if (hs_track_on) {
        if (hs_track_born(p, size, site, component) == 0)
            hs_heap_add((int64_t)size, component);
        return;
    }
    hs_heap_add(usable >= 0 ? usable : hs_heap_usable(p), component);
}

void hs_block_dying(void *p, struct hs_dying *d)
{
    d->p = p;
    d->record = NULL;
    if (hs_trace_on)
        hs_trace_dying(d);
    if (hs_track_on) {
        d->bytes = 0;
        if (hs_track_dying(p, d) == 0)
            d->bytes = (int64_t)d->size;
        return;
    }
    d->bytes = hs_heap_usable(p);
    d->component = hs_place.in.component != 0;
}

void hs_block_dead(struct hs_dying *d)
{
    if (hs_trace_on)
        hs_trace_free(d);
    if (d->record)
        hs_track_dead(d);
    if (d->bytes)
        hs_heap_add(-d->bytes, d->component);
}

void hs_block_revive(struct hs_dying *d)
{
    if (d->record)
        hs_track_revive(d);  /* nothing was counted yet: back into the table */
    /* the trace: its free event was not written; its number stays unused */
}
