/*
 * mpi_job.c — the job file, reduced inside the job at MPI_Finalize (layer_abi.h has
 * the sequence; the recorder owns the encoding and the file).
 *
 * Every rank dumps and summarizes itself (heapscope__job_summary). The parts (counts
 * per region path and size, per region path and API) go up a binomial tree on a
 * duplicate of MPI_COMM_WORLD: rank r receives from r+1, r+2, r+4 ... while those
 * exist and r has that bit clear, merges each, then sends to its parent; log2(P)
 * rounds, P-1 messages of sparse maps. The fixed rows go to rank 0 in one
 * MPI_Gather; rank 0 writes the job file and MPI_Scatter tells every rank whether
 * it keeps its own file (record --per-rank).
 *
 * Only jobs of two ranks or more: a singleton's (or one rank's) own file is the job.
 * Every rank takes part or none does: an MPI_Allreduce first checks that every rank
 * has the recorder (a rank without it would leave the others waiting in the tree).
 * A rank whose summary fails sends an empty part and a row of rank -1: the job
 * file leaves it out and it keeps its file. The MPI library's allocations in here
 * count as MPI's (component_depth).
 */
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "mpi_layer.h"

int heapscope_dump(void) __attribute__((weak));
#pragma weak heapscope__job_summary
#pragma weak heapscope__job_merge
#pragma weak heapscope__job_free
#pragma weak heapscope__job_write
#pragma weak heapscope__job_drop_rank_file
#pragma weak heapscope__mpi_finalize

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int have_recorder(void)
{
    return heapscope__job_summary && heapscope__job_merge && heapscope__job_free &&
           heapscope__job_write && heapscope__job_drop_rank_file;
}

/* The tree reduction of the parts; rank 0 ends with the whole, the others with none. */
static int reduce_parts(MPI_Comm comm, int rank, int size, void **part, size_t *len)
{
    int ok = 1;
    for (int mask = 1; mask < size; mask <<= 1) {
        if (rank & mask) {
            uint64_t n = ok ? *len : UINT64_MAX; /* UINT64_MAX: this subtree failed */
            PMPI_Send(&n, 1, MPI_UINT64_T, rank - mask, 1, comm);
            if (ok && n)
                PMPI_Send(*part, (int)n, MPI_BYTE, rank - mask, 2, comm);
            break;
        }
        if (rank + mask >= size)
            continue;
        uint64_t n;
        PMPI_Recv(&n, 1, MPI_UINT64_T, rank + mask, 1, comm, MPI_STATUS_IGNORE);
        if (n == UINT64_MAX) {
            ok = 0;
            continue;
        }
        void *child = NULL;
        if (n) {
            child = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (child == MAP_FAILED) { /* receive it anyway, into nothing kept */
                child = NULL;
                ok = 0;
            }
            PMPI_Recv(child ? child : MPI_BOTTOM, child ? (int)n : 0, MPI_BYTE, rank + mask, 2,
                      comm, MPI_STATUS_IGNORE);
        }
        void *merged = NULL;
        size_t mlen = 0;
        if (ok && heapscope__job_merge(*part, *len, child, n, &merged, &mlen) == 0) {
            heapscope__job_free(*part, *len);
            *part = merged;
            *len = mlen;
        } else {
            ok = 0;
        }
        if (child)
            munmap(child, n);
    }
    return ok ? 0 : -1;
}

static void job_file(void)
{
    MPI_Comm comm;
    int rank, size;
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS)
        return;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    uint64_t t0 = now_ns();
    void *part = NULL;
    size_t len = 0;
    struct heapscope_job_rank row;
    if (heapscope__job_summary(rank, &part, &len, &row) == 0) {
        row.rank = rank;
    } else {
        part = NULL;
        len = 0;
        memset(&row, 0, sizeof row);
        row.rank = -1;
    }
    uint64_t t1 = now_ns();
    int tree = reduce_parts(comm, rank, size, &part, &len);
    size_t rows_bytes = rank == 0 ? (size_t)size * sizeof row : 0;
    void *rows = NULL;
    if (rank == 0) {
        rows = mmap(NULL, rows_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (rows == MAP_FAILED)
            rows = NULL;
    }
    int gather = 1; /* (rank 0 without memory for the rows: no gather, nobody drops a file) */
    if (rank == 0)
        gather = rows != NULL;
    PMPI_Bcast(&gather, 1, MPI_INT, 0, comm);
    if (gather)
        PMPI_Gather(&row, (int)sizeof row, MPI_BYTE, rows, (int)sizeof row, MPI_BYTE, 0, comm);
    uint64_t t2 = now_ns();
    unsigned char *keep = NULL, mine = 1;
    if (rank == 0 && rows) {
        keep = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (keep == MAP_FAILED)
            keep = NULL;
        if (keep) {
            if (tree != 0 ||
                heapscope__job_write(part, len, rows, (uint32_t)size, keep, t1 - t0, t2 - t1) != 0)
                memset(keep, 1, (size_t)size);
        }
    }
    int scatter = keep != NULL;
    PMPI_Bcast(&scatter, 1, MPI_INT, 0, comm);
    if (scatter)
        PMPI_Scatter(keep, 1, MPI_BYTE, &mine, 1, MPI_BYTE, 0, comm);
    if (!mine && row.rank >= 0)
        heapscope__job_drop_rank_file();
    if (keep)
        munmap(keep, (size_t)size);
    if (rows)
        munmap(rows, rows_bytes);
    heapscope__job_free(part, len);
    PMPI_Comm_free(&comm);
}

static void finalize_dump(void)
{
    int initialized = 0, finalized = 0;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    int mine = have_recorder(), all = 0, size = 1;
    if (initialized && !finalized)
        PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) /* (a singleton or one rank: its own file is the job) */
        PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all)
        job_file();
    else if (heapscope_dump)
        heapscope_dump();
}

/* The MPI library's allocations in here are MPI's, like those of the calls the
 * program makes: the recorder's component depth is raised, but no call is counted
 * and none is measured by the calipers (the program made no such call). */
static void component_depth(int by)
{
    if (hsr_mpi_self.armed != &hsr_mpi_armed)
        hsr_mpi_attach();
    *hsr_mpi_self.depth += (uint32_t)by;
}

void hsr_mpi_finalize_dump(void)
{
    if (heapscope__mpi_finalize) /* an exit after this is no rank torn down */
        heapscope__mpi_finalize();
    component_depth(1);
    finalize_dump();
    component_depth(-1);
}
