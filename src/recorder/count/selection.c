/*
 * selection.c — which allocations get their stack captured.
 *
 *   HEAPSCOPE_STACK_SIZES   "12,24,100-200", "all", or unset/empty (no stacks)
 *   HEAPSCOPE_STACK_REGIONS "local,reduce": a region matches when its name or its
 *                           full path ("split/local") equals an entry; "(none)" is
 *                           the top level; unset/empty = every region.
 *
 * Sizes below SMALL_LIMIT are a bitmap, larger ones a short list of ranges. The
 * region test is done once per region id when it is interned (regions.c keeps
 * the answer in hsr_region_stacks[]), so the hot path tests a byte and a bit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count/selection.h"

#define SMALL_LIMIT HSR_SELECT_SMALL_LIMIT

int hsr_stacks_on;
int hsr_select_all;                         /* read inline by counting.h */
uint64_t hsr_select_bits[SMALL_LIMIT / 64]; /* idem */
static struct {
    uint64_t lo, hi;
} ranges[HSR_SELECT_MAX_RANGES]; /* inclusive, lo >= SMALL_LIMIT */
static int nranges;

static char region_names[HSR_SELECT_MAX_REGION_NAMES][256];
static int nregion_names;

int hsr_size_selected(uint64_t size)
{
    if (hsr_select_all)
        return 1;
    if (size < SMALL_LIMIT)
        return (hsr_select_bits[size / 64] >> (size % 64)) & 1;
    for (int i = 0; i < nranges; i++)
        if (size >= ranges[i].lo && size <= ranges[i].hi)
            return 1;
    return 0;
}

int hsr_region_name_selected(const char *name, const char *path)
{
    if (nregion_names == 0)
        return 1;
    for (int i = 0; i < nregion_names; i++)
        if (strcmp(region_names[i], name) == 0 || strcmp(region_names[i], path) == 0)
            return 1;
    return 0;
}

static int parse_u64(const char *s, const char *end, uint64_t *out)
{
    if (s == end)
        return -1;
    uint64_t v = 0;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static int add_range(uint64_t lo, uint64_t hi)
{
    for (; lo <= hi && lo < SMALL_LIMIT; lo++)
        hsr_select_bits[lo / 64] |= 1ull << (lo % 64);
    if (lo > hi)
        return 0;
    if (nranges == HSR_SELECT_MAX_RANGES)
        return -1;
    ranges[nranges].lo = lo;
    ranges[nranges].hi = hi;
    nranges++;
    return 0;
}

/* Returns 0, or -1 with a message in err. */
int hsr_selection_init(const char *sizes, const char *regions, char *err, size_t errlen)
{
    if (sizes && *sizes) {
        if (strcmp(sizes, "all") == 0) {
            hsr_select_all = 1;
        } else {
            for (const char *p = sizes; *p;) {
                const char *end = strchr(p, ',');
                if (!end)
                    end = p + strlen(p);
                const char *dash = memchr(p, '-', (size_t)(end - p));
                uint64_t lo, hi;
                int bad = dash ? parse_u64(p, dash, &lo) || parse_u64(dash + 1, end, &hi)
                               : parse_u64(p, end, &lo);
                if (!dash)
                    hi = lo;
                if (bad || lo > hi) {
                    snprintf(err, errlen,
                             "bad HEAPSCOPE_STACK_SIZES '%s': expected sizes and "
                             "ranges like 12,24,100-200 or 'all'",
                             sizes);
                    return -1;
                }
                if (add_range(lo, hi)) {
                    snprintf(err, errlen, "HEAPSCOPE_STACK_SIZES: more than %d large ranges",
                             HSR_SELECT_MAX_RANGES);
                    return -1;
                }
                p = *end ? end + 1 : end;
            }
        }
        hsr_stacks_on = 1;
    }
    if (regions && *regions) {
        for (const char *p = regions; *p;) {
            const char *end = strchr(p, ',');
            if (!end)
                end = p + strlen(p);
            size_t n = (size_t)(end - p);
            if (n == 0 || n >= sizeof region_names[0] ||
                nregion_names == HSR_SELECT_MAX_REGION_NAMES) {
                snprintf(err, errlen,
                         "bad HEAPSCOPE_STACK_REGIONS '%s': expected a comma list "
                         "of at most %d region names",
                         regions, HSR_SELECT_MAX_REGION_NAMES);
                return -1;
            }
            memcpy(region_names[nregion_names], p, n);
            region_names[nregion_names++][n] = 0;
            p = *end ? end + 1 : end;
        }
    }
    return 0;
}
