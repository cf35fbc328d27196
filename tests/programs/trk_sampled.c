/* --track with its default sampled stacks (tests/e2e/test_track_sampled.py): figures
 * known per call path, in sizes that sampling sees.
 *   hold_mesh:  8 blocks of 1 MiB, live at the heap peak, freed before exit
 *   leak_table: 3 blocks of 2 MiB, never freed (the leaks)
 *   scratch:    20,000 blocks of 4,096 bytes, each freed at once (temporaries)
 *   batches:    20,000 blocks of 4,096 bytes, ten at a time, then freed (not temporaries)
 * Nothing else allocates (no stdio). */
#include <stdlib.h>

void *volatile sink;

__attribute__((noinline)) static void hold_mesh(void **blocks)
{
    for (int i = 0; i < 8; i++)
        blocks[i] = malloc(1 << 20);
}

__attribute__((noinline)) static void leak_table(void)
{
    for (int i = 0; i < 3; i++)
        sink = malloc(2 << 20);
}

__attribute__((noinline)) static void scratch(void)
{
    for (int i = 0; i < 20000; i++) {
        sink = malloc(4096);
        free(sink);
    }
}

__attribute__((noinline)) static void batches(void)
{
    void *held[10];
    for (int i = 0; i < 2000; i++) {
        for (int j = 0; j < 10; j++)
            held[j] = malloc(4096);
        for (int j = 0; j < 10; j++)
            free(held[j]);
    }
}

int main(void)
{
    void *mesh[8];
    hold_mesh(mesh);
    scratch();
    batches();
    for (int i = 0; i < 8; i++)
        free(mesh[i]);
    leak_table();
    return 0;
}
