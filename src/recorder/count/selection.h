/*
 * selection.h — which sizes and regions get their stack captured (selection.c),
 * with the common answers inline for the hot path.
 */
#ifndef HSR_SELECTION_H
#define HSR_SELECTION_H

#include "common.h"

extern HSR_HIDDEN int hsr_stacks_on;  /* any size selected at all */
extern HSR_HIDDEN int hsr_select_all; /* "all" */
extern HSR_HIDDEN uint64_t hsr_select_bits[HSR_SELECT_SMALL_LIMIT / 64];
HSR_HIDDEN int hsr_selection_init(const char *sizes, const char *regions, char *err, size_t errlen);
HSR_HIDDEN int hsr_size_selected(uint64_t size);
HSR_HIDDEN int hsr_region_name_selected(const char *name, const char *path);

/* hsr_size_selected, with its common answers inline. */
static inline int hsr_size_wanted(uint64_t size)
{
    if (hsr_select_all)
        return 1;
    if (size < HSR_SELECT_SMALL_LIMIT)
        return (hsr_select_bits[size / 64] >> (size % 64)) & 1;
    return hsr_size_selected(size);
}

#endif
