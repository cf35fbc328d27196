/* acc_mpi: MPI_Recv into fresh heap blocks, for record --access (tests/e2e/test_access_mpi.py).
 *
 * Rank 0 sends rank 1, N times, one message of 1 MiB and one of 3000 bytes. Rank 1
 * receives each into a new block: recv_big_alloc(2 MiB), of which the message fills
 * the first half (the rest never touched), and recv_small_alloc(3000), filled whole;
 * it sums what it received and frees the blocks. Both ranks print the checksum of the
 * data (the same with and without the recorder). Usage: acc_mpi N
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BIG (1024 * 1024)
#define SMALL 3000

__attribute__((noinline)) static unsigned char *recv_big_alloc(void)
{
    return malloc(2 * BIG);
}

__attribute__((noinline)) static unsigned char *recv_small_alloc(void) { return malloc(SMALL); }

static uint64_t sum(const unsigned char *p, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i] * (uint64_t)(i % 251 + 1);
    return s;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n = argc > 1 ? atoi(argv[1]) : 20;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    uint64_t total = 0;
    if (rank == 0) {
        unsigned char *big = malloc(BIG), *small = malloc(SMALL);
        for (int i = 0; i < n; i++) {
            for (size_t k = 0; k < BIG; k++)
                big[k] = (unsigned char)(k * 13 + i);
            for (size_t k = 0; k < SMALL; k++)
                small[k] = (unsigned char)(k * 7 + i);
            MPI_Send(big, BIG, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Send(small, SMALL, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
            total += sum(big, BIG) + sum(small, SMALL);
        }
        free(big);
        free(small);
    } else if (rank == 1) {
        for (int i = 0; i < n; i++) {
            unsigned char *big = recv_big_alloc(), *small = recv_small_alloc();
            MPI_Recv(big, BIG, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(small, SMALL, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            total += sum(big, BIG) + sum(small, SMALL);
            free(big);
            free(small);
        }
    }
    printf("rank %d checksum %llu\n", rank, (unsigned long long)total);
    MPI_Finalize();
    return 0;
}
