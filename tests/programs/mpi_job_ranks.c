/* The job report's test program (tests/test_mpi_job.py), run on 4 ranks. Rank r keeps
 * r + 1 blocks of 1,000,000 bytes outside MPI calls and, inside MPI_Pcontrol(1) ..
 * MPI_Pcontrol(0) (region "pcontrol-1"), 2 blocks of 7000 bytes; then every rank
 * reaches a barrier. With the argument "kill", rank 2 then raises SIGTERM on itself
 * (the other ranks go on to MPI_Finalize, where the job is torn down); without it,
 * every rank frees its blocks and finalizes. */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define BIG 1000000
#define SMALL 7000

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *big[8];
    for (int i = 0; i <= rank; i++) {
        big[i] = malloc(BIG);
        memset(big[i], i, BIG);
    }
    MPI_Pcontrol(1);
    char *small[2];
    for (int i = 0; i < 2; i++) {
        small[i] = malloc(SMALL);
        memset(small[i], i, SMALL);
    }
    MPI_Pcontrol(0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (argc > 1 && strcmp(argv[1], "kill") == 0 && rank == 2)
        raise(SIGTERM);
    for (int i = 0; i < 2; i++)
        free(small[i]);
    for (int i = 0; i <= rank; i++)
        free(big[i]);
    MPI_Finalize();
    return 0;
}
