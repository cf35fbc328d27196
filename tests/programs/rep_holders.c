/* Known heap peak and leaks for tests/e2e/test_peak_and_leaks.py (record --track).
 * One thread, no stdio. Link with librep_vendor.so (rep_vendor.c).
 *
 *   peak:   build_mesh() holds 10 blocks of 4096 B and scratch() 4 blocks of 1000 B
 *           at the same time: the peak is 44,960 B, reached when the last scratch
 *           block is allocated; both are freed before anything else is allocated.
 *   leaks:  after the peak, parse_config() leaks 3 blocks of 72 B and
 *           vendor_cache_init() (in librep_vendor.so) 5 blocks of 200 B; 8 blocks
 *           of 24 B from tmp_list() are all freed (no leak).
 * Lines of the malloc calls are marked LINE-MARK for the test. */
#include <stdlib.h>

void vendor_cache_init(void);

static void *mesh[10], *scratch_blocks[4], *config[3], *list[8];

__attribute__((noinline)) void build_mesh(void)
{
    for (int i = 0; i < 10; i++)
        mesh[i] = malloc(4096);  /* LINE-MARK mesh */
}

__attribute__((noinline)) void scratch(void)
{
    for (int i = 0; i < 4; i++)
        scratch_blocks[i] = malloc(1000);  /* LINE-MARK scratch */
}

__attribute__((noinline)) void parse_config(void)
{
    for (int i = 0; i < 3; i++)
        config[i] = malloc(72);  /* LINE-MARK config */
}

__attribute__((noinline)) void tmp_list(void)
{
    for (int i = 0; i < 8; i++)
        list[i] = malloc(24);  /* LINE-MARK list */
    for (int i = 0; i < 8; i++)
        free(list[i]);
}

int main(void)
{
    build_mesh();
    scratch();
    for (int i = 0; i < 4; i++)
        free(scratch_blocks[i]);
    for (int i = 0; i < 10; i++)
        free(mesh[i]);
    parse_config();  /* LINE-MARK main-config */
    vendor_cache_init();  /* LINE-MARK main-vendor */
    tmp_list();
    return 0;
}
