/*
 * own_memory.h — the recorder's own resident memory (own_memory.c): what its tables,
 * rings and buffers take of the process's RSS, measured apart so that the timeline
 * and every report can show the program's RSS/PSS net of it.
 */
#ifndef HSR_OWN_MEMORY_H
#define HSR_OWN_MEMORY_H

#include "common.h"

/* pool.c: every mapping the recorder makes (hsr_map) and gives back (hsr_unmap);
 * async-signal-safe, no lock, no system call. */
HSR_HIDDEN void hsr_own_add(void *start, size_t bytes);
HSR_HIDDEN void hsr_own_remove(void *start, size_t bytes);
/* Lists libheapscope.so's writable segments (the dynamic loader's lock: at start,
 * before any sample). */
HSR_HIDDEN void hsr_own_start(void);
/* Resident bytes of the recorder's mappings and of its library's writable data now
 * (mincore). fresh: look at every page (the sampler's periodic samples); else pages
 * found resident in whole granules before are taken as still resident (boundary and
 * caliper samples: a few us). -1 when nothing could be read. Any thread, signal
 * handlers too; -1 before hsr_own_start. */
HSR_HIDDEN int64_t hsr_own_resident(int fresh);

#endif
