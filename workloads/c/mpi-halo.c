/*
 * hs-wl-mpi-halo — the halo exchange of a stencil code on a periodic ring of ranks:
 * each step posts MPI_Irecv from both neighbours, MPI_Isend to both, MPI_Waitall on
 * the four requests, then an MPI_Allreduce of one double (the residual a solver
 * checks every step); --steps steps of --size bytes per halo. On 1 rank both
 * neighbours are the rank itself: no partner to wait for, so the rate measures the
 * cost per MPI call even on a busy machine. The halos' contents depend on the step and
 * the sender only, so the checksum (of everything received and every reduced value,
 * all ranks, gathered in rank order) is the same whatever the timing. Rank 0 prints
 * the step rate over the slowest rank's wall time and over the busiest rank's timing
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID), then the checksum. The MPI layer's
 * overhead benchmark (scripts/bench_mpi.sh), with hs-wl-mpi-msgrate.
 */
#include "wl_mpi.h"

static void fill(unsigned char *buf, size_t n, long long step, int from, int side)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(step * 7 + from * 3 + side + (long long)i);
}

/* steps of: 2 x MPI_Irecv, 2 x MPI_Isend, MPI_Waitall, MPI_Allreduce (not inlined: a
 * profiler counts the timed loop alone, callgrind --toggle-collect=exchange) */
static __attribute__((noinline)) uint64_t exchange(int rank, int nprocs, long long steps, size_t size, unsigned char *buf,
                         uint64_t h)
{
    const int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;
    unsigned char *to_left = buf, *to_right = buf + size, *from_left = buf + 2 * size,
                  *from_right = buf + 3 * size;
    for (long long s = 0; s < steps; s++) {
        MPI_Request req[4];
        MPI_Irecv(from_left, (int)size, MPI_BYTE, left, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(from_right, (int)size, MPI_BYTE, right, 0, MPI_COMM_WORLD, &req[1]);
        fill(to_left, size, s, rank, 0);
        fill(to_right, size, s, rank, 1);
        MPI_Isend(to_left, (int)size, MPI_BYTE, left, 0, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(to_right, (int)size, MPI_BYTE, right, 1, MPI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        if (from_left[size - 1] != (unsigned char)(s * 7 + left * 3 + 1 + (long long)(size - 1))) {
            fprintf(stderr, "hs-wl-mpi-halo: rank %d got wrong data from %d\n", rank, left);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        double local = (double)(from_left[0] + from_right[0]), sum = 0;
        MPI_Allreduce(&local, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        h = wl_hash_bytes(h, from_left, size);
        h = wl_hash_bytes(h, from_right, size);
        h = wl_hash_u64(h, (uint64_t)sum);
    }
    return h;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    wl_opt opts[] = {
        {"steps", "halo exchanges (each: 2 Irecv, 2 Isend, 1 Waitall, 1 Allreduce)", 200000, 1,
         1000000000},
        {"size", "bytes per halo", 8, 1, 1 << 20},
        {"warmup", "steps before timing", 1000, 0, 1000000},
    };
    wl_parse(argc, argv, "MPI halo exchange on a periodic ring of ranks, with a reduction.",
             opts, 3);
    const long long steps = opts[0].value, warmup = opts[2].value;
    const size_t size = (size_t)opts[1].value;
    unsigned char *buf = wl_check(malloc(4 * size), "mpi-halo");

    exchange(rank, nprocs, warmup, size, buf, WL_FNV_INIT);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), c0 = wl_thread_cpu_seconds();
    uint64_t h = exchange(rank, nprocs, steps, size, buf, WL_FNV_INIT);
    double spent[2] = {MPI_Wtime() - t0, wl_thread_cpu_seconds() - c0}, most[2] = {0, 0};
    MPI_Reduce(spent, most, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    const uint64_t total = wl_mpi_checksum(h, rank, nprocs);
    if (rank == 0) {
        printf("mpi-halo: %d processes, %lld steps of 2 halos of %zu bytes in %.6f s\n", nprocs,
               steps, size, most[0]);
        printf("steps/s: %.0f\n", most[0] > 0 ? steps / most[0] : 0.0);
        printf("steps per CPU second: %.0f\n", most[1] > 0 ? steps / most[1] : 0.0);
        wl_print_checksum(total);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
