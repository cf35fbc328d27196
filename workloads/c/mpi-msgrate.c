/*
 * hs-wl-mpi-msgrate — point-to-point small-message rate: ranks are paired (0-1, 2-3,
 * ...; an odd last rank idles), and each pair ping-pongs --messages round trips of
 * --size bytes with MPI_Send/MPI_Recv. The rate is the number of one-way messages
 * of all pairs divided by the slowest pair's time (MPI_Wtime, after a barrier and
 * --warmup round trips). The message contents depend on the round trip only, so the
 * checksum (of everything received, all ranks, gathered in rank order) is the same
 * whatever the timing; rank 0 prints the rate, then the checksum. On 1 rank, the rank
 * sends each message to itself (MPI_Isend, MPI_Recv, MPI_Wait): no partner to wait
 * for, so the rate measures the cost per MPI call even on a busy machine. Besides the
 * rate over wall time, rank 0 prints the rate over the CPU time of the busiest rank's
 * timing thread (CLOCK_THREAD_CPUTIME_ID): time the thread was descheduled does not
 * count, which steadies the 1-rank figure on a loaded machine. The benchmark of the
 * MPI layer's overhead per call (scripts/bench_mpi.sh). --null-calls N: rank 0 also
 * times N calls of MPI_Comm_rank, which does almost nothing (best of 5 rounds, thread
 * CPU time): the cost of a wrapper's bracket alone.
 */
#include "wl_mpi.h"

static void fill(unsigned char *buf, size_t n, long long trip, int from)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(trip * 13 + from * 5 + (long long)i);
}

static uint64_t ping_pong(int rank, int peer, long long trips, size_t size,
                          unsigned char *out, unsigned char *in, uint64_t h)
{
    const int leader = rank < peer;
    for (long long t = 0; t < trips; t++) {
        fill(out, size, t, rank);
        if (leader) {
            MPI_Send(out, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(in, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(in, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(out, (int)size, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
        }
        if (size && in[size - 1] != (unsigned char)(t * 13 + peer * 5 + (long long)(size - 1))) {
            fprintf(stderr, "hs-wl-mpi-msgrate: rank %d got wrong data from %d\n", rank, peer);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        h = wl_hash_bytes(h, in, size);
    }
    return h;
}

static uint64_t to_self(int rank, long long messages, size_t size,
                        unsigned char *out, unsigned char *in, uint64_t h)
{
    for (long long t = 0; t < messages; t++) {
        MPI_Request req;
        fill(out, size, t, rank);
        MPI_Isend(out, (int)size, MPI_BYTE, rank, 3, MPI_COMM_WORLD, &req);
        MPI_Recv(in, (int)size, MPI_BYTE, rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        h = wl_hash_bytes(h, in, size);
    }
    return h;
}

static volatile int null_sink;   /* keeps the calls' results used */

/* ns per MPI_Comm_rank call, best of 5 rounds of `calls` */
static double null_call_ns(long long calls)
{
    double best = 0;
    int r;
    for (int round = 0; round < 5; round++) {
        double c0 = wl_thread_cpu_seconds();
        for (long long i = 0; i < calls; i++) {
            MPI_Comm_rank(MPI_COMM_WORLD, &r);
            null_sink += r;
        }
        double ns = (wl_thread_cpu_seconds() - c0) * 1e9 / (double)calls;
        if (round == 0 || ns < best)
            best = ns;
    }
    return best;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    wl_opt opts[] = {
        {"messages", "round trips per pair (2 messages each; on 1 rank: messages)", 200000, 1,
         1000000000},
        {"size", "bytes per message", 8, 1, 1 << 20},
        {"warmup", "round trips before timing", 1000, 0, 1000000},
        {"null-calls", "rank 0: also time this many MPI_Comm_rank calls", 0, 0, 1000000000},
    };
    wl_parse(argc, argv, "MPI point-to-point ping-pong rate of small messages, ranks paired.",
             opts, 4);
    const long long trips = opts[0].value, warmup = opts[2].value;
    const size_t size = (size_t)opts[1].value;
    const int peer = rank ^ 1;
    const int active = peer < nprocs;
    unsigned char *out = wl_check(malloc(size), "mpi-msgrate");
    unsigned char *in = wl_check(malloc(size), "mpi-msgrate");

    uint64_t h = WL_FNV_INIT;
    if (nprocs == 1)
        to_self(rank, warmup, size, out, in, WL_FNV_INIT);
    else if (active)
        ping_pong(rank, peer, warmup, size, out, in, WL_FNV_INIT);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), c0 = wl_thread_cpu_seconds();
    if (nprocs == 1)
        h = to_self(rank, trips, size, out, in, h);
    else if (active)
        h = ping_pong(rank, peer, trips, size, out, in, h);
    double spent[2] = {MPI_Wtime() - t0, wl_thread_cpu_seconds() - c0}, most[2] = {0, 0};
    MPI_Reduce(spent, most, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    const double slowest = most[0], busiest = most[1];

    const uint64_t total = wl_mpi_checksum(h, rank, nprocs);
    if (rank == 0) {
        const long long messages = nprocs == 1 ? trips : 2 * trips * (nprocs / 2);
        if (nprocs == 1)
            printf("mpi-msgrate: 1 process messaging itself, %lld messages of %zu bytes in "
                   "%.6f s\n", messages, size, slowest);
        else
            printf("mpi-msgrate: %d processes, %d pairs, %lld messages of %zu bytes in %.6f s\n",
                   nprocs, nprocs / 2, messages, size, slowest);
        printf("messages/s: %.0f\n", slowest > 0 ? messages / slowest : 0.0);
        printf("messages per CPU second: %.0f\n", busiest > 0 ? messages / busiest : 0.0);
        if (opts[3].value > 0)
            printf("ns per MPI_Comm_rank: %.2f\n", null_call_ns(opts[3].value));
        wl_print_checksum(total);
    }
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
