/*
 * mpi_layer.c — the hand-written part of libheapscope_mpi.so (the PMPI wrappers of every
 * other MPI function are generated from mpi.h by gen_wrappers.py).
 *
 * The call bracket is in mpi_layer.h (inlined into every wrapper); here is the part
 * that runs once per thread, attaching it to the recorder (layer_abi.h).
 * MPI_Pcontrol(level, ...): level != 0 begins the process-wide region "pcontrol-<level>",
 * level 0 ends the innermost one. MPI_Finalize writes a snapshot before PMPI_Finalize
 * (the recorder writes another one at exit) and, reduced over the ranks, the job
 * file (mpi_job.c). MPI_Abort writes the process's final
 * snapshot, reason "mpi-abort" with its error code, before PMPI_Abort ends the job.
 * Without libheapscope.so preloaded the recorder entry points are absent (weak): the
 * wrappers only pass the calls on.
 */
#include <mpi.h>
#include <stdio.h>

#include "mpi_layer.h"

void heapscope_region_begin(const char *name) __attribute__((weak));
void heapscope_region_end(void) __attribute__((weak));
int heapscope__mpi_abort(int errorcode) __attribute__((weak));

static const char MPI_REGION[] = "[MPI]";
/* the flag alone on its cache line: nothing the calls write shares it */
struct hsr_mpi_armed_line hsr_mpi_armed_line;

/* Before the thread attaches: the first call goes the full way (flag 1). Without the
 * recorder: a depth and a counter nobody reads, and the flag stays down. */
static const _Atomic int unattached = 1;
static uint32_t unattached_depth;
static uint64_t unattached_calls;
static __thread __attribute__((tls_model("initial-exec"))) uint32_t own_depth;
static __thread __attribute__((tls_model("initial-exec"))) uint64_t own_calls;
HSR_MPI_TLS struct hsr_mpi_thread hsr_mpi_self = {&unattached, &unattached_depth, &unattached_calls,
                                                  0};

void hsr_mpi_attach(void)
{
    struct hsr_mpi_thread *t = &hsr_mpi_self;
    struct heapscope_layer_thread rec;
    hsr_mpi_name_library();
    if (heapscope__layer_attach && heapscope__layer_attach(MPI_REGION, &hsr_mpi_armed, &rec) == 0) {
        t->calls = rec.calls;
        t->depth = rec.depth;
    } else {
        t->calls = &own_calls;
        t->depth = &own_depth;
    }
    t->armed = &hsr_mpi_armed;
}

void hsr_mpi_measure(const char *fn, int always)
{
    if (heapscope__caliper_begin)
        hsr_mpi_self.measured = heapscope__caliper_begin(fn, always);
}

void hsr_mpi_measured_end(const char *fn)
{
    hsr_mpi_self.measured = 0;
    heapscope__caliper_end(fn);
}

int MPI_Pcontrol(const int level, ...)
{
    if (level != 0 && heapscope_region_begin) {
        char name[32];
        snprintf(name, sizeof name, "pcontrol-%d", level);
        heapscope_region_begin(name);
    } else if (level == 0 && heapscope_region_end) {
        heapscope_region_end();
    }
    hsr_mpi_enter("MPI_Pcontrol", 0);
    int rc = PMPI_Pcontrol(level);
    hsr_mpi_leave("MPI_Pcontrol");
    return rc;
}

int MPI_Finalize(void)
{
    hsr_mpi_finalize_dump();
    hsr_mpi_enter("MPI_Finalize", 1);
    int rc = PMPI_Finalize();
    hsr_mpi_leave("MPI_Finalize");
    return rc;
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    if (heapscope__mpi_abort)
        heapscope__mpi_abort(errorcode);
    hsr_mpi_enter("MPI_Abort", 0);
    int rc = PMPI_Abort(comm, errorcode);
    hsr_mpi_leave("MPI_Abort");
    return rc;
}
