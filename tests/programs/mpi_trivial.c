/* MPI_Init then MPI_Finalize, nothing else (tests/mpi/test_attribution.py). */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
