/*
 * layer_abi.h — what the recorder (libheapscope.so) offers heapscope's own add-on
 * layers (libheapscope_mpi.so), included by both sides.
 *
 * A layer brackets every call into its component (the MPI library):
 *
 *   enter:  ++*calls;
 *           if (*depth == 0 && (always || armed)) measured = heapscope__caliper_begin(fn, always);
 *           ++*depth;
 *   leave:  if (--*depth == 0 && measured) heapscope__caliper_end(fn);
 *
 * depth and calls come from heapscope__layer_attach, once per thread, and armed is
 * the layer's own word, whose address the layer gives at attach; so the bracket
 * costs a few loads and stores and no call into the recorder: while *depth > 0 the
 * recorder counts the thread's allocations for the child region named by the layer
 * (e.g. "[MPI]") of the region the thread is in, and its heap blocks as the
 * component's. The recorder sets *armed when the next outermost call should be
 * measured (calipers, timeline/calipers.c); calls lets it tell how many calls
 * were not measured.
 *
 * The layer declares these functions weak: without the recorder it only forwards.
 */
#ifndef HSR_LAYER_ABI_H
#define HSR_LAYER_ABI_H

#include <stdatomic.h>
#include <stdint.h>

struct heapscope_layer_thread {
    /* the calling thread's component depth (recorder TLS) */
    uint32_t *depth;
    /* the calling thread's count of calls: only the thread writes it (plain stores),
     * the recorder reads it (__atomic_load_n, relaxed) */
    uint64_t *calls;
};

/* Fills *t for the calling thread; component: the child region's name, the same
 * string every time (only one component per process); armed: the layer's flag, the
 * same every time (the recorder sets it to arm the calipers, the layer's calls read
 * it). 0 on success. */
int heapscope__layer_attach(const char *component, _Atomic int *armed,
                            struct heapscope_layer_thread *t);
/* Called at depth 0. always: the call maps memory (MPI_Init, MPI_Alloc_mem ...):
 * measured whatever the rate limit, RSS and PSS; else (armed) RSS only, from the cheap
 * counter. Returns 1 when the call is measured: call heapscope__caliper_end after,
 * back at depth 0. */
int heapscope__caliper_begin(const char *fn, int always);
void heapscope__caliper_end(const char *fn);
/* MPI_Abort(comm, errorcode) is about to end the job: the final snapshot, reason
 * "mpi-abort", with the code. 0 when written. */
int heapscope__mpi_abort(int errorcode);
/* MPI_Finalize is reached: an exit after it is a rank's end, not a rank torn down
 * before it (PROCESS_END's END_MPI_UNFINALIZED). */
void heapscope__mpi_finalize(void);
/* The MPI library the process runs on, named once at its first MPI call: version and
 * subversion from MPI_Get_version, text from MPI_Get_library_version (copied). The
 * recorder writes it to the profile (MPI_LIBRARY) and rank 0 to the job file. */
void heapscope__mpi_library(int version, int subversion, const char *text);

/* ---- the job file: rank summaries reduced inside the job (MPI_Finalize) ----
 *
 * The layer moves bytes, the recorder owns their encoding (output/job_summary.c)
 * and the job file (output/job_file.c):
 *   1. heapscope__job_summary: this rank's final dump (reason "api") and, from the
 *      same merged counts, its part (counts per (region path, size) and per (region
 *      path, API), its largest stack types at its tracking peak, an opaque buffer) and
 *      its fixed row;
 *   2. the layer reduces the parts up a binomial tree (heapscope__job_merge at each
 *      parent) and gathers the rows at rank 0;
 *   3. rank 0: heapscope__job_write writes heapscope.<job>.job.hsj and says which
 *      ranks keep their per-rank file (record --per-rank); the layer scatters that;
 *   4. a rank told to drop its file calls heapscope__job_drop_rank_file.
 * Buffers from the recorder are released with heapscope__job_free. */
/* host name bytes in a row, NUL-padded */
#define HEAPSCOPE_JOB_HOST 64
/* bits of heapscope_job_rank.present: which figures the rank has */
enum heapscope_job_field {
    HEAPSCOPE_JOB_COUNTS = 1,      /* alloc_* */
    HEAPSCOPE_JOB_HEAP = 2,        /* heap_* (timeline samples measured the heap) */
    HEAPSCOPE_JOB_RSS = 4,         /* rss_peak */
    HEAPSCOPE_JOB_PSS = 8,         /* pss_peak */
    HEAPSCOPE_JOB_CALIPERS = 16,   /* mpi_rss, mpi_pss */
    HEAPSCOPE_JOB_HEAP_EXACT = 32, /* heap_* are the exact peaks (kept at every allocation) */
    HEAPSCOPE_JOB_RECORDER = 64    /* recorder_peak (then rss_peak, pss_peak are net of it);
                                    * in the JOB_RECORDER chunk, not in JOB_RANKS' bits */
};
struct heapscope_job_rank {             /* fixed size: gathered as bytes */
    int64_t rank, pid, present, reason; /* reason: HS_REASON_* of the rank's snapshot */
    uint64_t alloc_app_blocks, alloc_mpi_blocks, alloc_app_bytes, alloc_mpi_bytes;
    int64_t heap_peak, heap_app_peak, heap_mpi_peak; /* exact (HEAP_EXACT) or the samples' maxima */
    int64_t rss_peak, pss_peak, mpi_rss, mpi_pss;    /* rss/pss: the program's */
    int64_t recorder_peak; /* the recorder's own resident memory at its largest */
    char host[HEAPSCOPE_JOB_HOST];
};
/* rank: this process's rank in MPI_COMM_WORLD (named in the peak stack types) */
int heapscope__job_summary(int rank, void **part, size_t *len, struct heapscope_job_rank *row);
int heapscope__job_merge(const void *a, size_t alen, const void *b, size_t blen, void **out,
                         size_t *outlen);
void heapscope__job_free(void *p, size_t len);
/* rank 0: rows[i] is rank i's (rank -1: it had no summary); keep[i] set to 1 when
 * rank i keeps its file (all of them when the job file cannot be written). summary_ns,
 * reduce_ns: rank 0's time in heapscope__job_summary and in the reduction, recorded
 * in the file. 0 on success. */
int heapscope__job_write(const void *part, size_t len, const struct heapscope_job_rank *rows,
                         uint32_t nranks, unsigned char *keep, uint64_t summary_ns,
                         uint64_t reduce_ns);
void heapscope__job_drop_rank_file(void);

#endif
