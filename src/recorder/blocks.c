/*
 * blocks.c — each block's birth and death, as the hooks report them (blocks.h),
 * passed on to heap accounting (heap_accounting.c), tracking (tracking.c) and
 * the event trace (trace.c).
 */
#define _GNU_SOURCE
#include "blocks.h"
#include "recorder.h"

int hs_heap_watch;

int hs_heap_measure_requested(void) { return 0; }

void hs_block_born(void *p, uint64_t size, struct hs_site site)
{
    (void)size;
    (void)site;
    hs_heap_add(hs_heap_usable(p), hs_in_component != 0);
}

void hs_block_dying(void *p, struct hs_dying *d)
{
    d->p = p;
    d->bytes = hs_heap_usable(p);
    d->component = hs_in_component != 0;
    d->record = NULL;
}

void hs_block_dead(struct hs_dying *d)
{
    hs_heap_add(-d->bytes, d->component);
}

void hs_block_revive(struct hs_dying *d)
{
    (void)d;  /* nothing was subtracted yet */
}
