/* Under `heapscope record --mpi` (tests/mpi/test_job_figures.py): every rank holds a
 * block of 6,400,000 bytes for a moment, twice, each time between two timeline
 * samples: in the program's region "burst" (allocated and freed between the region's
 * begin and end samples), and inside MPI_Allreduce (its user-defined operation
 * allocates it: a block inside an MPI call counts as MPI's, and the calipers sample
 * before and after the call only). The job report's heap peaks must see both. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "heapscope.h"

#define BURST 6400000

static void burst_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    char *p = malloc(BURST);
    memset(p, 1, BURST);
    ((int *)inout)[0] += ((int *)in)[0] + p[BURST - 1] - 1;
    free(p);
    (void)len;
    (void)type;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    HEAPSCOPE_REGION_BEGIN("burst");
    char *p = malloc(BURST);
    memset(p, 2, BURST);
    int x = p[BURST - 1];
    free(p);
    HEAPSCOPE_REGION_END();
    MPI_Op op;
    MPI_Op_create(burst_op, 1, &op);
    int in = x, out = 0, size;
    MPI_Allreduce(&in, &out, 1, MPI_INT, op, MPI_COMM_WORLD);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op_free(&op);
    MPI_Finalize();
    return out != 2 * size;
}
