/*
 * windows.h — the 1 MiB address windows the compact side table (table.h) has seen,
 * each with a number (its id, < HSR_WINDOWS): a slot keeps the window's id (20 bits)
 * and the block's 16-byte granule in it (16 bits) instead of the address's 44.
 * A window's id never changes; ids are never given back (a program's heap reuses its
 * windows: 2^20 of them is a terabyte of address space). An open-addressing table,
 * added to without a lock (a compare-and-swap claims a slot) and read without one.
 */
#ifndef HSR_TRACK_WINDOWS_H
#define HSR_TRACK_WINDOWS_H

#include "common.h"

#define HSR_WINDOW_SHIFT 20

extern HSR_HIDDEN _Atomic uint64_t *hsr_windows; /* by id: the window's number + 1; 0 free */

/* The id of a window, or -1 if it was never seen. */
static inline int64_t hsr_window_find(uint64_t window)
{
    uint64_t key = window + 1, h = window; /* nearby windows, nearby ids: few pages */
    for (uint64_t i = 0; i < HSR_WINDOWS; i++) {
        uint64_t at = (h + i) & (HSR_WINDOWS - 1);
        uint64_t k = atomic_load_explicit(&hsr_windows[at], memory_order_acquire);
        if (k == key)
            return (int64_t)at;
        if (!k)
            return -1;
    }
    return -1;
}

/* The window of an id. */
static inline uint64_t hsr_window_of(uint64_t id)
{
    return atomic_load_explicit(&hsr_windows[id], memory_order_relaxed) - 1;
}

/* windows.c */
HSR_HIDDEN int hsr_windows_init(void);              /* -1: no memory */
HSR_HIDDEN int64_t hsr_window_add(uint64_t window); /* its id, new if need be; -1: full */

#endif
