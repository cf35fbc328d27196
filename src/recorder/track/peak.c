/*
 * peak.c — tracking's global figures: the requested bytes of tracked blocks live,
 * their peak and when it was reached, the blocks the side table did not take (and
 * their bytes: with any, the peak is a lower bound); and
 * who held the peak.
 *
 * The peak ("who holds it"), the lazy way: a new maximum of the requested bytes
 * live marks a peak pending (births.c); the first death counted after it
 * (death.h) or the snapshot copies every record's live count into its at-peak
 * count before anything is freed, so the copy is the state at the maximum. Exact
 * for one thread; with several the copy is taken while others may allocate.
 */
#define _GNU_SOURCE
#include "track/tracking.h"

struct hsr_split hsr_track_live_bytes;
_Atomic int64_t hsr_track_max_bytes;
_Atomic uint64_t hsr_track_max_ns;
_Atomic int hsr_track_peak_pending;
_Atomic uint64_t hsr_track_untracked;
_Atomic uint64_t hsr_track_untracked_bytes;

static void capture_peak(void)
{
    for (struct hsr_track_rec *r = hsr_track_records(); r; r = r->next)
        atomic_store_explicit(&r->live_at_peak, hsr_track_live(r), memory_order_relaxed);
}

void hsr_track_peak_now(void)
{
    int one = 1;
    if (atomic_compare_exchange_strong(&hsr_track_peak_pending, &one, 0))
        capture_peak();
}

void hsr_track_figures(struct hsr_track_figures *f)
{
    f->peak_bytes = atomic_load(&hsr_track_max_bytes);
    f->peak_mono_ns = atomic_load(&hsr_track_max_ns);
    f->end_bytes = hsr_split_value(&hsr_track_live_bytes);
    f->untracked = atomic_load(&hsr_track_untracked);
    f->untracked_bytes = atomic_load(&hsr_track_untracked_bytes);
    f->table_bytes = atomic_load(&hsr_track_table_bytes);
}

void hsr_track_peak_reset(void)
{
    atomic_store(&hsr_track_untracked, 0);
    atomic_store(&hsr_track_untracked_bytes, 0);
    hsr_split_reset(&hsr_track_live_bytes);
    atomic_store(&hsr_track_max_bytes, 0);
    atomic_store(&hsr_track_max_ns, 0);
    atomic_store(&hsr_track_peak_pending, 0);
}
