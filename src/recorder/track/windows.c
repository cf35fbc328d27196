/*
 * windows.c — making the address windows' table (windows.h) and adding to it.
 */
#define _GNU_SOURCE
#include "track/windows.h"
#include "core/pool.h"
#include "track/tracking.h"

_Atomic uint64_t *hsr_windows;

int hsr_windows_init(void)
{
    hsr_windows = hsr_map(HSR_WINDOWS * sizeof *hsr_windows); /* pages touched as used */
    return hsr_windows ? 0 : -1;
}

int64_t hsr_window_add(uint64_t window)
{
    uint64_t key = window + 1, h = window;           /* nearby windows, nearby ids: few pages */
    for (uint64_t i = 0; i < HSR_WINDOWS / 2; i++) { /* half full: the rest stays wide */
        uint64_t at = (h + i) & (HSR_WINDOWS - 1), free_ = 0;
        if (atomic_compare_exchange_strong(&hsr_windows[at], &free_, key)) {
            atomic_fetch_add(&hsr_track_table_bytes, (int64_t)sizeof *hsr_windows);
            return (int64_t)at;
        }
        if (free_ == key)
            return (int64_t)at;
    }
    return -1;
}
