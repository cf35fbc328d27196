/*
 * job_file.h — the job file written by rank 0 at MPI_Finalize (job_file.c) from the
 * parts reduced over the ranks (job_summary.c); layer_abi.h has the sequence.
 */
#ifndef HSR_JOB_FILE_H
#define HSR_JOB_FILE_H

#include <string.h>

#include "common.h"

/* Little-endian fields of an encoded part, read from any alignment (job_summary.c,
 * access/job.c). */
static inline uint32_t hsr_get_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t hsr_get_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* An encoded part, checked, with pointers to its three arrays (job_summary.c's
 * encoding). -1 when its lengths disagree. */
struct hsr_job_part_view {
    uint32_t nregions, nsizes, napis;
    const uint8_t *regions, *sizes, *apis;
    const uint8_t *peaks; /* the peak stack types' section (job_peak_stacks.c) */
    size_t peaks_len;
    const uint8_t *access; /* record --access's section (access/job.c), 0 bytes: none */
    size_t access_len;
};
HSR_HIDDEN int hsr_job_part_visit(const void *part, size_t len, struct hsr_job_part_view *v);
/* Region paths interned in an arena (job_summary.c): the index of s, added if new;
 * failed set (and 0 returned) when the arena is out of memory. */
struct hsr_arena;
struct hsr_job_paths {
    const char **s;
    uint32_t *len;
    uint32_t n, cap;
    struct hsr_arena *arena;
    int failed;
};
HSR_HIDDEN uint32_t hsr_job_path_index(struct hsr_job_paths *p, const char *s, uint32_t len);
/* The reader's path of a region id ("solve/[MPI]"), as the parts name regions. */
HSR_HIDDEN size_t hsr_job_region_path(uint32_t id, char *out,
                                      size_t cap); /* profile_writer.c: "" when none */

#endif
