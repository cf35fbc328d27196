/* Per-rank memory of known laws of the rank count p (tests/mpi/test_scaling.py): every
 * rank holds at once, from three call paths of its own,
 *   hold_table    one block of TABLE bytes                   constant
 *   hold_domain   one block of PROBLEM / p bytes             1/p: a share of a fixed problem
 *   hold_peers    a send and a receive area of p * PEER bytes p: per-peer buffers
 *                 (two call paths: one line each)
 * exchanges them (MPI_Alltoall, PEER bytes to each peer), then frees them
 * all (the peak's holders are taken at the first free) and finalizes. Every block is
 * written, so resident memory follows too. The application's heap peak is then
 * base + TABLE + PROBLEM / p + 2 * p * PEER. PROBLEM is divided exactly by 1 to 64. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define TABLE 3000000
#define PROBLEM 24000000
#define PEER 65536

__attribute__((noinline)) static char *hold_table(void)
{
    char *t = malloc(TABLE);
    memset(t, 1, TABLE);
    return t;
}

__attribute__((noinline)) static char *hold_domain(int p)
{
    char *d = malloc(PROBLEM / p);
    memset(d, 2, PROBLEM / p);
    return d;
}

__attribute__((noinline)) static char **hold_peers(int p)
{
    char **b = malloc(sizeof(char *) * 2);
    b[0] = malloc((size_t)p * PEER);
    b[1] = malloc((size_t)p * PEER);
    memset(b[0], 3, (size_t)p * PEER);
    memset(b[1], 0, (size_t)p * PEER);
    return b;
}

int main(int argc, char **argv)
{
    int p, rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *table = hold_table();
    char *domain = hold_domain(p);
    char **peers = hold_peers(p);
    MPI_Alltoall(peers[0], PEER, MPI_BYTE, peers[1], PEER, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    free(peers[0]);
    free(peers[1]);
    free(peers);
    free(domain);
    free(table);
    MPI_Finalize();
    return 0;
}
