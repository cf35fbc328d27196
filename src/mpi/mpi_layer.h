/*
 * mpi_layer.h — the MPI layer's call bracket, inlined into every generated wrapper.
 *
 * Every MPI call through the layer raises the recorder's component depth for the
 * calling thread while it runs, so its allocations count for "[MPI]" (layer_abi.h).
 * The outermost one (MPI calling MPI counts once) also counts itself in the thread's
 * call counter and is measured by the calipers when the recorder has armed them or
 * the function maps memory. The usual call costs a thread-local load, a
 * read-modify-write of the depth on each side, a counter increment and one load of
 * the layer's own armed flag: nothing is called. Without the recorder (its entry
 * points are weak), the bracket points at the layer's own dummies and only forwards.
 *
 * Which functions get a wrapper at all, and which are always measured, is decided
 * per function by gen_wrappers.py: calls that cannot allocate (MPI_Comm_rank ...)
 * are not wrapped, so they cost nothing.
 */
#ifndef HSR_MPI_H
#define HSR_MPI_H
#include <string.h>

#include "layer_abi.h"
#pragma weak heapscope__layer_attach
#pragma weak heapscope__caliper_begin
#pragma weak heapscope__caliper_end

#define HSR_MPI_TLS __thread __attribute__((tls_model("initial-exec"), visibility("hidden")))
#define HSR_MPI_HIDDEN __attribute__((visibility("hidden")))

/* The layer's per-thread state. Before the thread's first call it points at words
 * that send the call the slow way (statically initialized: nothing to test). */
struct hsr_mpi_thread {
    const _Atomic int *armed; /* the layer's armed flag once attached; before: a word
                               * that is always 1, so the first call takes the full
                               * bracket, which attaches the thread */
    uint32_t *depth;          /* the recorder's component depth of the thread; it counts
                               * nested MPI calls too */
    uint64_t *calls;          /* the thread's count of MPI calls (layer_abi.h) */
    int measured;             /* the outermost call is being measured */
};
extern HSR_MPI_TLS struct hsr_mpi_thread hsr_mpi_self;

/* Set by the recorder's sampler when the next outermost call is to be measured (the
 * layer's own word, on a cache line of its own). */
extern HSR_MPI_HIDDEN struct hsr_mpi_armed_line {
    _Atomic int flag;
    char rest[60];
} hsr_mpi_armed_line __attribute__((aligned(64)));
#define hsr_mpi_armed (hsr_mpi_armed_line.flag)
HSR_MPI_HIDDEN void hsr_mpi_attach(void); /* the thread's first MPI call */
/* The outermost call `fn` may be measured (out of line: the rare path). */
HSR_MPI_HIDDEN void hsr_mpi_measure(const char *fn, int always);
HSR_MPI_HIDDEN void hsr_mpi_measured_end(const char *fn);
/* The process's first MPI call: the MPI library named to the recorder (mpi_library.c) */
HSR_MPI_HIDDEN void hsr_mpi_name_library(void);
/* MPI_Finalize, before PMPI_Finalize: the job file when every rank has the
 * recorder (mpi_job.c), else this rank's snapshot. */
HSR_MPI_HIDDEN void hsr_mpi_finalize_dump(void);

/* One more MPI call. Only this thread writes its counter, and the recorder reads it
 * as a whole word: a plain increment (an add to memory), not an atomic
 * read-modify-write. */
static inline __attribute__((always_inline)) void hsr_mpi_count_call(struct hsr_mpi_thread *t)
{
    ++*t->calls;
}

/* The usual call: the thread attached and no caliper armed. Counts the call, raises
 * the depth and returns it (the wrapper lowers it after the call: a call let through
 * here is never measured, so nothing else is needed); NULL when the call must take the
 * full bracket below. */
static inline __attribute__((always_inline)) uint32_t *hsr_mpi_fast_enter(void)
{
    struct hsr_mpi_thread *t = &hsr_mpi_self;
    if (__builtin_expect(atomic_load_explicit(t->armed, memory_order_relaxed), 0))
        return NULL;
    hsr_mpi_count_call(t);
    uint32_t *d = t->depth;
    ++*d;
    return d;
}

/* The full bracket: the functions that map memory, the calls hsr_mpi_fast_enter
 * turns away, the hand-written wrappers. fn: the MPI function's name (a string
 * literal), for calipers and timeline labels; always: the function maps memory
 * (gen_wrappers.py maps_memory): measured whatever the rate limit, RSS and PSS. */
static inline __attribute__((always_inline)) void hsr_mpi_enter(const char *fn, int always)
{
    struct hsr_mpi_thread *t = &hsr_mpi_self;
    if (__builtin_expect(t->armed != &hsr_mpi_armed, 0))
        hsr_mpi_attach();
    hsr_mpi_count_call(t);
    uint32_t outer = *t->depth;
    if (outer == 0 && (always || atomic_load_explicit(&hsr_mpi_armed, memory_order_relaxed)))
        hsr_mpi_measure(fn, always); /* at depth 0: the sample's region is the caller's */
    *t->depth = outer + 1;
}

static inline __attribute__((always_inline)) void hsr_mpi_leave(const char *fn)
{
    struct hsr_mpi_thread *t = &hsr_mpi_self;
    if (--*t->depth == 0 && __builtin_expect(t->measured, 0))
        hsr_mpi_measured_end(fn);
}
#endif
