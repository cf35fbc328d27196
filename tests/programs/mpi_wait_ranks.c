/* A job that waits to be ended from outside (tests/mpi/test_job_teardown.py): rank r
 * keeps r + 1 blocks of 1,000,000 bytes, all ranks reach a barrier, each prints
 * "ready <rank>" and then sleeps, outside any MPI call, until a signal ends it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *volatile sink;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i <= rank; i++)
        sink = malloc(1000000);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("ready %d\n", rank);
    fflush(stdout);
    for (int i = 0; i < 600; i++)
        sleep(1);
    MPI_Finalize();
    return 0;
}
