/*
 * layer_abi.h — what the recorder (libheapscope.so) offers heapscope's own add-on
 * layers (libheapscope_mpi.so), included by both sides.
 *
 * A layer brackets every outermost call into its component (the MPI library):
 *
 *   enter:  ++calls; if (always || *armed) measured = heapscope__caliper_begin(fn, always);
 *           ++*depth;
 *   leave:  --*depth; if (measured) heapscope__caliper_end(fn);
 *
 * Both pointers come from heapscope__layer_attach, once per thread, so the bracket
 * costs a few thread-local loads and stores and no call into the recorder: while
 * *depth > 0 the recorder counts the thread's allocations for the child region
 * named by the layer (e.g. "[MPI]") of the region the thread is in, and its heap
 * blocks as the component's. *armed is set by the recorder when the next call
 * should be measured (calipers, timeline/calipers.c); calls lets the recorder tell
 * how many calls the rate limit skipped.
 *
 * The layer declares these functions weak: without the recorder it only forwards.
 */
#ifndef HSR_LAYER_ABI_H
#define HSR_LAYER_ABI_H

#include <stdatomic.h>
#include <stdint.h>

struct heapscope_layer_thread {
    uint32_t *depth;         /* the calling thread's component depth (recorder TLS) */
    _Atomic uint64_t *calls; /* the calling thread's count of outermost calls */
    _Atomic int *armed;      /* process-wide: measure the next call */
};

/* Fills *t for the calling thread; component: the child region's name, the same
 * string every time (only one component per process). 0 on success. */
int heapscope__layer_attach(const char *component, struct heapscope_layer_thread *t);
/* always: the call maps memory (MPI_Init, MPI_Alloc_mem ...): measured whatever the
 * rate limit. Returns 1 when the call is measured: call heapscope__caliper_end after. */
int heapscope__caliper_begin(const char *fn, int always);
void heapscope__caliper_end(const char *fn);
/* MPI_Abort(comm, errorcode) is about to end the job: the final snapshot, reason
 * "mpi-abort", with the code. 0 when written. */
int heapscope__mpi_abort(int errorcode);

#endif
