/* A measured MPI call that gives memory back (tests/mpi/test_job_file.py): each rank
 * allocates a shared window of 16 MiB (MPI_Win_allocate_shared: a mapping, not heap),
 * touches it outside MPI calls, and frees it in MPI_Win_free, whose non-heap growth is
 * then about -16 MiB: the calipers' running sum falls below its peak, and the job
 * file must report the peak, as the rank files' reader does. */
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    char *base;
    MPI_Win win;
    MPI_Aint size = 16 << 20;
    MPI_Win_allocate_shared(size, 1, MPI_INFO_NULL, node, &base, &win);
    memset(base, 1, (size_t)size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
