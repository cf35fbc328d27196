/*
 * deaths.c — tracking mode's deaths taken in steps, as hooks/blocks.c does when
 * the trace is on too or for a realloc: the block out of the side table before
 * the real free (dying), its death counted after (dead), or back into the table
 * when the realloc failed (revive). The common case, a free in tracking mode
 * alone, is deferred.c's.
 */
#define _GNU_SOURCE
#include "core/fast_clock.h"
#include "count/thread.h"
#include "hooks/blocks.h"
#include "track/death.h"
#include "track/table.h"
#include "track/track.h"
#include "track/tracking.h"

int hsr_track_dying(void *p, struct hsr_dying *d)
{
    /* the slot is likely cold (a block allocated long ago): fetch it while the
     * clock is read */
    hsr_slot_prefetch(hsr_self, (uint64_t)(uintptr_t)p);
    d->dying_clock = hsr_clock_raw();
    struct hsr_slot s;
    if (hsr_slot_remove(hsr_self, (uint64_t)(uintptr_t)p, UINT64_MAX, 0, &s))
        return -1;
    d->record = (void *)(s.rec & ~(uintptr_t)1);
    d->component = (int)(s.rec & 1);
    d->size = ((struct hsr_track_rec *)d->record)->size;
    d->born_clock = s.born;
    d->born_seq = s.seq;
    return 0;
}

void hsr_track_revive(struct hsr_dying *d)
{
    struct hsr_slot s = {(uint64_t)(uintptr_t)d->p, d->born_clock,
                         (uintptr_t)d->record | (d->component ? 1u : 0u), d->born_seq};
    struct hsr_slot dead;
    struct hsr_thread *t = hsr_self;
    int put = hsr_slot_insert(t, t ? hsr_track_thread_peek(t) : NULL, &s, &dead, 1);
    if (put > 0)
        hsr_track_replaced_died(t, &dead, hsr_clock_raw());
    if (put < 0 || put == 2) { /* cannot happen: its slot was just freed; but never lose it */
        struct hsr_track_rec *r = d->record;
        hsr_track_left_out(d->size);
        atomic_fetch_sub_explicit(&r->shared.allocs, 1,
                                  memory_order_relaxed); /* the sum wraps back */
        hsr_split_add(&hsr_track_live_bytes, hsr_self, -(int64_t)d->size);
    }
}

void hsr_track_dead(struct hsr_dying *d)
{
    struct freer f;
    freer_here(&f, hsr_self, d->dying_clock);
    struct hsr_slot s = {(uint64_t)(uintptr_t)d->p, d->born_clock, (uintptr_t)d->record,
                         d->born_seq};
    record_death(&f, &s, d->record);
}
