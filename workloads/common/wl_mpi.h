/*
 * wl_mpi.h — what the MPI rate workloads (mpi-msgrate, mpi-halo) share: the timing
 * thread's CPU clock and the job's checksum.
 */
#ifndef WL_MPI_H
#define WL_MPI_H

#include <mpi.h>
#include <time.h>

#include "wl_common.h"

/* CPU time of the calling thread (time it was descheduled does not count). */
static inline double wl_thread_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Every rank's checksum h, combined in rank order: the job's, at rank 0 (0 elsewhere). */
static inline uint64_t wl_mpi_checksum(uint64_t h, int rank, int nprocs)
{
    uint64_t *all = rank == 0 ? wl_check(malloc((size_t)nprocs * sizeof *all), "gather") : NULL;
    MPI_Gather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    uint64_t total = 0;
    if (rank == 0) {
        total = WL_FNV_INIT;
        for (int r = 0; r < nprocs; r++)
            total = wl_hash_u64(total, all[r]);
        free(all);
    }
    return total;
}

#endif
