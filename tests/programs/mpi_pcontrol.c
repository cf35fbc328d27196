/* Single process, no mpirun (tests/mpi/test_attribution.py): 3 blocks of 7777 bytes
 * inside MPI_Pcontrol(1) .. MPI_Pcontrol(0), 2 blocks of 7777 bytes after it. */
#include <mpi.h>
#include <stdlib.h>

static void *volatile sink;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Pcontrol(1);
    for (int i = 0; i < 3; i++) {
        sink = malloc(7777);
        free(sink);
    }
    MPI_Pcontrol(0);
    for (int i = 0; i < 2; i++) {
        sink = malloc(7777);
        free(sink);
    }
    MPI_Finalize();
    return 0;
}
