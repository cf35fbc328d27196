/* The job file's peak stack types (tests/mpi/test_job_peak_stacks.py), run on 4 ranks with
 * record --track. Rank r holds, from distinct call paths, at its heap peak (M = 1,000,000):
 *   hold_mesh    one block of (r + 1) * 4M                       every rank
 *   hold_halo    3 blocks of (4 - r) * 1M, in region pcontrol-1   every rank
 *   nest(d)      d = 1..5 nested calls: one block of 2M + d * 100000 + r * 1000
 *   hold_odd     one block of 6M + r * 1000                       ranks 1 and 3
 *   hold_even    one block of 1.5M + r * 1000                     ranks 0 and 2
 *   hold_spill   20M on rank 0, 1000 bytes elsewhere
 * so each rank's 8 largest types are the program's: on rank 0 hold_spill pushes hold_even
 * out (9 types), and hold_spill's 1000 bytes are no rank's 8 largest but rank 0's 20M.
 * Then every block is freed (the peak's holders are taken at the first free) and the
 * ranks finalize. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define M 1000000

static void *blocks[32];
static int nblocks;


__attribute__((noinline)) static void hold_mesh(int rank)
{
    blocks[nblocks++] = malloc((size_t)(rank + 1) * 4 * M);
}

__attribute__((noinline)) static void hold_halo(int rank)
{
    for (int i = 0; i < 3; i++)
        blocks[nblocks++] = malloc((size_t)(4 - rank) * M);
}

__attribute__((noinline)) static void nest(int d, int levels, int rank)
{
    if (levels > 1) {
        nest(d, levels - 1, rank);
        return;
    }
    blocks[nblocks++] = malloc(2 * M + (size_t)d * 100000 + (size_t)rank * 1000);
}

__attribute__((noinline)) static void hold_odd(int rank)
{
    blocks[nblocks++] = malloc(6 * M + (size_t)rank * 1000);
}

__attribute__((noinline)) static void hold_even(int rank)
{
    blocks[nblocks++] = malloc(3 * M / 2 + (size_t)rank * 1000);
}

__attribute__((noinline)) static void hold_spill(int rank)
{
    blocks[nblocks++] = malloc(rank == 0 ? 20 * M : 1000);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    hold_mesh(rank);
    MPI_Pcontrol(1);
    hold_halo(rank);
    MPI_Pcontrol(0);
    for (int d = 1; d <= 5; d++)
        nest(d, d, rank);
    if (rank % 2)
        hold_odd(rank);
    else
        hold_even(rank);
    hold_spill(rank);
    for (int i = 0; i < nblocks; i++)
        memset(blocks[i], 1, 64);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < nblocks; i++)
        free(blocks[i]);
    MPI_Finalize();
    return 0;
}
