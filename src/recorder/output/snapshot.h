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

#endif
