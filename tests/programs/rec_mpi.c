/* Under mpirun (tests/e2e/test_record_process.py): rank r allocates 14014 bytes r+1
 * times; each rank's file is named with the job id and its rank. */
#include <mpi.h>
#include <stdlib.h>

static void *volatile sink;

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i <= rank; i++) {
        sink = malloc(14014);
        free(sink);
    }
    MPI_Finalize();
    return 0;
}
