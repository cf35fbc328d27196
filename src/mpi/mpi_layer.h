/*
 * mpi_layer.h — the MPI layer's call bracket, inlined into every generated wrapper.
 *
 * The outermost MPI call of a thread (MPI calling MPI counts once) raises the
 * recorder's component depth for the thread, so its allocations count for "[MPI]"
 * (layer_abi.h), counts itself in the thread's call counter, and is measured by
 * the calipers when the recorder has armed them or the function maps memory. The
 * usual call costs thread-local loads and stores and one load of the armed flag:
 * nothing is called. Without the recorder (its entry points are weak), the
 * bracket points at the layer's own dummies and only forwards.
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

struct hsr_mpi_thread {
    unsigned depth;                    /* MPI calls nested on this thread */
    int measured;                      /* the outermost call is being measured */
    struct heapscope_layer_thread rec; /* the recorder's counters; depth NULL: not attached */
};
extern HSR_MPI_TLS struct hsr_mpi_thread hsr_mpi_self;
HSR_MPI_HIDDEN void hsr_mpi_attach(void); /* first MPI call of the thread */
/* The process's first MPI call: the MPI library named to the recorder (mpi_library.c) */
HSR_MPI_HIDDEN void hsr_mpi_name_library(void);
/* MPI_Finalize, before PMPI_Finalize: the job file when every rank has the
 * recorder (mpi_job.c), else this rank's snapshot. */
HSR_MPI_HIDDEN void hsr_mpi_finalize_dump(void);

/* Functions where MPI libraries map their big segments: always measured. fn is a
 * string literal, so this folds to a constant in each wrapper. */
static inline int hsr_mpi_maps_memory(const char *fn)
{
    return __builtin_strncmp(fn, "MPI_Init", 8) == 0 || __builtin_strcmp(fn, "MPI_Finalize") == 0 ||
           __builtin_strcmp(fn, "MPI_Alloc_mem") == 0 ||
           __builtin_strncmp(fn, "MPI_Win_allocate", 16) == 0;
}

/* fn: the MPI function's name (a string literal), for calipers and timeline labels */
static inline __attribute__((always_inline)) void hsr_mpi_enter(const char *fn)
{
    struct hsr_mpi_thread *t = &hsr_mpi_self;
    if (t->depth++ != 0)
        return;
    if (__builtin_expect(!t->rec.depth, 0))
        hsr_mpi_attach();
    atomic_store_explicit(t->rec.calls,
                          atomic_load_explicit(t->rec.calls, memory_order_relaxed) + 1,
                          memory_order_relaxed); /* only this thread writes it */
    int always = hsr_mpi_maps_memory(fn);
    if (__builtin_expect(always || atomic_load_explicit(t->rec.armed, memory_order_relaxed), 0) &&
        heapscope__caliper_begin)
        t->measured = heapscope__caliper_begin(fn, always);
    ++*t->rec.depth;
}

static inline __attribute__((always_inline)) void hsr_mpi_leave(const char *fn)
{
    struct hsr_mpi_thread *t = &hsr_mpi_self;
    if (--t->depth != 0)
        return;
    --*t->rec.depth;
    if (__builtin_expect(t->measured, 0)) {
        t->measured = 0;
        heapscope__caliper_end(fn);
    }
}
#endif
