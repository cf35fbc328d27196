/*
 * snapshot.h — one dump (snapshot.c): every thread's tables merged and appended
 * to the file as one snapshot.
 */
#ifndef HSR_SNAPSHOT_H
#define HSR_SNAPSHOT_H

#include "common.h"

HSR_HIDDEN int hsr_snapshot(unsigned reason, int from_signal);
HSR_HIDDEN void hsr_snapshot_reset_baseline(void);
HSR_HIDDEN void hsr_snapshot_after_fork_child(void);
HSR_HIDDEN void hsr_dump_lock_for_fork(void);
HSR_HIDDEN void hsr_dump_unlock_for_fork(void);
/* The job summary (job_summary.c) reads the counts of the very snapshot it writes:
 * set for one hsr_snapshot call, visit sees every SIZE_COUNTS row (api 0, key the
 * size) and API_COUNTS row (api 1, key the API id) as written, under the dump lock. */
typedef void (*hsr_snapshot_visit)(void *ctx, int api, uint32_t region, uint64_t key,
                                   uint64_t count);
HSR_HIDDEN void hsr_snapshot_capture(hsr_snapshot_visit visit, void *ctx);

#endif
