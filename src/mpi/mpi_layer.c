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
HSR_MPI_TLS struct hsr_mpi_thread hsr_mpi_self;

/* Without the recorder: counters nobody reads, a flag nobody raises. */
static __thread __attribute__((tls_model("initial-exec"))) uint32_t own_depth;
static __thread __attribute__((tls_model("initial-exec"))) _Atomic uint64_t own_calls;
static _Atomic int never_armed;

void hsr_mpi_attach(void)
{
    struct heapscope_layer_thread *rec = &hsr_mpi_self.rec;
    hsr_mpi_name_library();
    if (heapscope__layer_attach && heapscope__layer_attach(MPI_REGION, rec) == 0)
        return;
    rec->depth = &own_depth;
    rec->calls = &own_calls;
    rec->armed = &never_armed;
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
    hsr_mpi_enter("MPI_Pcontrol");
    int rc = PMPI_Pcontrol(level);
    hsr_mpi_leave("MPI_Pcontrol");
    return rc;
}

int MPI_Finalize(void)
{
    hsr_mpi_finalize_dump();
    hsr_mpi_enter("MPI_Finalize");
    int rc = PMPI_Finalize();
    hsr_mpi_leave("MPI_Finalize");
    return rc;
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    if (heapscope__mpi_abort)
        heapscope__mpi_abort(errorcode);
    hsr_mpi_enter("MPI_Abort");
    int rc = PMPI_Abort(comm, errorcode);
    hsr_mpi_leave("MPI_Abort");
    return rc;
}
