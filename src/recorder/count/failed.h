/*
 * failed.h — allocation calls that failed (NULL returned, posix_memalign's EINVAL or
 * ENOMEM), counted apart from the sizes (failed.c): a failed call allocated nothing,
 * so it is in no size row and no byte total. Written as FAILED_ALLOCS
 * (profile_format.h). Out of line: only a failure comes here.
 */
#ifndef HSR_FAILED_H
#define HSR_FAILED_H

#include "common.h"

HSR_HIDDEN void hsr_failed_note(unsigned api, uint64_t size, uint32_t region);
/* Every row: size_known 0 when the table of distinct (region, api, size) was full
 * (then size is 0). */
typedef void (*hsr_failed_fn)(void *ctx, uint32_t region, unsigned api, uint64_t size,
                              int size_known, uint64_t calls);
HSR_HIDDEN void hsr_failed_visit(void *ctx, hsr_failed_fn fn);
HSR_HIDDEN void hsr_failed_after_fork_child(void);

#endif
