/*
 * job_peak_stacks.h — who held the heap peak on every rank, reduced with the job file's
 * parts (job_peak_stacks.c): a section of each part (job_summary.c), the root's written
 * as the job file's JOB_PEAK_STACKS chunk (job_file.c).
 */
#ifndef HSR_JOB_PEAK_STACKS_H
#define HSR_JOB_PEAK_STACKS_H

#include "common.h"

struct hsr_buf;
/* This rank's section (its HSR_JOB_PEAK_PER_RANK largest types at its tracking peak;
 * none without --track) appended to out. 0, or -1 out of memory. */
HSR_HIDDEN int hsr_job_peaks_own(struct hsr_buf *out, int rank);
/* Two sections (either may be empty: length 0) merged into out. -1: malformed or out
 * of memory. */
HSR_HIDDEN int hsr_job_peaks_merge(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                                   struct hsr_buf *out);
/* The root's section as a JOB_PEAK_STACKS chunk of HSR_JOB_PEAK_TOP types. */
HSR_HIDDEN int hsr_job_peaks_chunk(struct hsr_buf *file, const uint8_t *sec, size_t len);

#endif
