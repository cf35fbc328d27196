/* Under `heapscope record --mpi` (tests/mpi/test_attribution.py): every rank allocates
 * exactly 10 blocks of 4,000,000 bytes outside MPI calls, then exchanges 1000 ints with
 * every rank through MPI_Alltoall (send/receive buffers: 4000 * size bytes each). */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS 10
#define BLOCK_BYTES 4000000
#define PER_RANK 1000

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *blocks[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
        blocks[i] = malloc(BLOCK_BYTES);
        memset(blocks[i], rank, BLOCK_BYTES);
    }
    int *send = malloc(sizeof(int) * PER_RANK * size);
    int *recv = malloc(sizeof(int) * PER_RANK * size);
    for (int i = 0; i < PER_RANK * size; i++)
        send[i] = rank * 100000 + i;
    MPI_Alltoall(send, PER_RANK, MPI_INT, recv, PER_RANK, MPI_INT, MPI_COMM_WORLD);
    int bad = 0;
    for (int r = 0; r < size; r++)
        bad |= recv[r * PER_RANK] != r * 100000 + rank * PER_RANK;
    free(send);
    free(recv);
    for (int i = 0; i < BLOCKS; i++)
        free(blocks[i]);
    MPI_Finalize();
    return bad;
}
