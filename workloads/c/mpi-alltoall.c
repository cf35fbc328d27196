/*
 * hs-wl-mpi-alltoall — MPI_Alltoall over MPI_COMM_WORLD, message sizes alternating
 * between 2 KB and 4 MB per destination process; the send and receive buffers are
 * allocated before and freed after every exchange (the pattern that makes the MPI
 * library's registration caches and the allocator's large-block path work).
 * Rank 0 prints the checksum of what every rank received, in rank order.
 */
#include <mpi.h>

#include "wl_common.h"

static unsigned char pattern(int src, int dst, int iter, size_t off)
{
    return (unsigned char)(src * 31 + dst * 7 + iter + off / 512);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    wl_opt opts[] = {
        {"iterations", "exchanges (even: 2 KB, odd: 4 MB per process)", 40, 0, 1000000},
        {"small", "bytes per process in the small exchanges", 2048, 1, 1 << 30},
        {"large", "bytes per process in the large exchanges", 4 << 20, 1, 1 << 30},
    };
    wl_parse(argc, argv, "MPI all-to-all alternating 2 KB and 4 MB per process.", opts, 3);
    const int iterations = (int)opts[0].value;

    uint64_t h = WL_FNV_INIT;
    for (int it = 0; it < iterations; it++) {
        const size_t per = (size_t)(it % 2 == 0 ? opts[1].value : opts[2].value);
        unsigned char *sendbuf = wl_check(malloc(per * (size_t)nprocs), "mpi-alltoall");
        unsigned char *recvbuf = wl_check(malloc(per * (size_t)nprocs), "mpi-alltoall");
        for (int d = 0; d < nprocs; d++)
            for (size_t off = 0; off < per; off += 256)
                sendbuf[(size_t)d * per + off] = pattern(rank, d, it, off);
        MPI_Alltoall(sendbuf, (int)per, MPI_BYTE, recvbuf, (int)per, MPI_BYTE, MPI_COMM_WORLD);
        for (int s = 0; s < nprocs; s++)
            for (size_t off = 0; off < per; off += 256) {
                const unsigned char v = recvbuf[(size_t)s * per + off];
                if (v != pattern(s, rank, it, off)) {
                    fprintf(stderr, "hs-wl-mpi-alltoall: rank %d got wrong data from %d\n", rank, s);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                h = wl_hash_u64(h, v);
            }
        free(recvbuf);
        free(sendbuf);
    }
    uint64_t *all = rank == 0 ? wl_check(malloc((size_t)nprocs * sizeof *all), "gather") : NULL;
    MPI_Gather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        uint64_t total = WL_FNV_INIT;
        for (int r = 0; r < nprocs; r++)
            total = wl_hash_u64(total, all[r]);
        free(all);
        printf("mpi-alltoall: %d processes, %d exchanges\n", nprocs, iterations);
        wl_print_checksum(total);
    }
    MPI_Finalize();
    return 0;
}
