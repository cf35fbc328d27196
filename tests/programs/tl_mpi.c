/* MPI calipers test program (tests/mpi/test_calipers.py). argv[1] = N.
 * Outermost MPI calls of every rank, in order:
 *   MPI_Init, MPI_Comm_rank, MPI_Comm_size,
 *   MPI_Pcontrol(1)                       (region "pcontrol-1" begins)
 *   N x MPI_Comm_rank                     (a call that cannot allocate)
 *   N x MPI_Test of MPI_REQUEST_NULL      (a call that can: it may run the progress engine)
 *   3 x MPI_Allreduce of a 1 MiB buffer allocated by the program
 *   MPI_Pcontrol(0)                       (the region ends)
 *   MPI_Barrier, MPI_Finalize
 * = 2N + 10 calls. Prints nothing. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    int rank, size, r;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Pcontrol(1);
    for (int i = 0; i < n; i++)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    for (int i = 0; i < n; i++) {
        MPI_Request none = MPI_REQUEST_NULL;
        int done;
        MPI_Test(&none, &done, MPI_STATUS_IGNORE);
    }
    int count = (1 << 20) / (int)sizeof(double);
    double *in = malloc((size_t)count * sizeof(double));
    double *out = malloc((size_t)count * sizeof(double));
    for (int i = 0; i < count; i++)
        in[i] = rank + i;
    for (int k = 0; k < 3; k++)
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Pcontrol(0);
    MPI_Barrier(MPI_COMM_WORLD);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
