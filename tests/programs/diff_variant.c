/* Known allocations for `heapscope diff` (tests/e2e/test_diff.py, tests/e2e/test_rebuild_in_place.py),
 * in two variants of one source: built as is ("before") and with -DFIXED ("after"). The
 * variant changes only the constants below, so every allocating line and every call stays
 * on the same source line and the unchanged call paths have the same function, file and
 * line in both builds (whose build-ids differ).
 *
 *   region  function      size         before  after
 *   build   make_nodes    40           100     100    unchanged
 *   build   make_pairs    12 -> 24     300     150    one line, other size: a migration
 *   solve   make_temps    64            50      80    more
 *   solve   make_scratch  16            20       0    gone
 *   solve   make_index    32             0      30    new
 *
 * No stdio and no other library call that allocates: these are all of its allocations. */
#define HEAPSCOPE_WEAK
#include <stdlib.h>

#include "heapscope.h"

#ifdef FIXED
#define PAIR_SIZE 24
#define PAIRS 150
#define TEMPS 80
#define SCRATCH 0
#define INDEX 30
#else
#define PAIR_SIZE 12
#define PAIRS 300
#define TEMPS 50
#define SCRATCH 20
#define INDEX 0
#endif

static void *kept[1000];
static int nkept;
static void *volatile sink;

__attribute__((noinline)) static void make_nodes(int n)
{
    for (int i = 0; i < n; i++)
        kept[nkept++] = malloc(40);                  /* LINE-MARK nodes */
}

__attribute__((noinline)) static void make_pairs(int n)
{
    for (int i = 0; i < n; i++)
        kept[nkept++] = malloc(PAIR_SIZE);           /* LINE-MARK pairs */
}

__attribute__((noinline)) static void make_temps(int n)
{
    for (int i = 0; i < n; i++) {
        sink = malloc(64);                           /* LINE-MARK temps */
        free(sink);
    }
}

__attribute__((noinline)) static void make_scratch(int n)
{
    for (int i = 0; i < n; i++)
        kept[nkept++] = malloc(16);                  /* LINE-MARK scratch */
}

__attribute__((noinline)) static void make_index(int n)
{
    for (int i = 0; i < n; i++)
        kept[nkept++] = malloc(32);                  /* LINE-MARK index */
}

int main(void)
{
    HEAPSCOPE_REGION_BEGIN("build");
    make_nodes(100);                                 /* LINE-MARK main-nodes */
    make_pairs(PAIRS);                               /* LINE-MARK main-pairs */
    HEAPSCOPE_REGION_END();
    HEAPSCOPE_REGION_BEGIN("solve");
    make_temps(TEMPS);                               /* LINE-MARK main-temps */
    make_scratch(SCRATCH);                           /* LINE-MARK main-scratch */
    make_index(INDEX);                               /* LINE-MARK main-index */
    HEAPSCOPE_REGION_END();
    for (int i = 0; i < nkept; i++)
        free(kept[i]);
    return 0;
}
