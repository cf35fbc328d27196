/*
 * hs_mpi.c — the hand-written part of libheapscope_mpi.so (the PMPI wrappers of every
 * other MPI function are generated from mpi.h by gen_wrappers.py).
 *
 * While a thread is inside an MPI call (outermost one: MPI calling MPI counts once),
 * its heap allocations count for the child region "[MPI]" of the region it was in.
 * Calipers: the outermost call is bracketed by heapscope__caliper_begin/_end (the
 * recorder's timeline_calipers.c: RSS/PSS before and after, rate-limited there, so an
 * unmeasured call costs a clock read and a compare); the "before" is taken outside
 * "[MPI]", the "after" once the region is restored.
 * MPI_Pcontrol(level, ...): level != 0 begins the process-wide region "pcontrol-<level>",
 * level 0 ends the innermost one. MPI_Finalize writes a snapshot before PMPI_Finalize
 * (the recorder writes another one at exit).
 * Without libheapscope.so preloaded the recorder entry points are absent (weak): the
 * wrappers only pass the calls on.
 */
#include <mpi.h>
#include <stdio.h>

#include "hs_mpi.h"

#define HS_TLS __thread __attribute__((tls_model("initial-exec")))

unsigned heapscope__thread_region_enter(const char *child_name) __attribute__((weak));
void heapscope__thread_region_restore(unsigned previous) __attribute__((weak));
void heapscope_region_begin(const char *name) __attribute__((weak));
void heapscope_region_end(void) __attribute__((weak));
int heapscope_dump(void) __attribute__((weak));
int heapscope__caliper_begin(const char *fn) __attribute__((weak));
void heapscope__caliper_end(const char *fn) __attribute__((weak));

static const char MPI_REGION[] = "[MPI]";
static HS_TLS unsigned depth;
static HS_TLS unsigned saved_region;
static HS_TLS int measured;   /* the outermost call is being measured by the calipers */

void hs_mpi_enter(const char *fn)
{
    if (depth++ != 0)
        return;
    if (heapscope__caliper_begin)
        measured = heapscope__caliper_begin(fn);
    if (heapscope__thread_region_enter)
        saved_region = heapscope__thread_region_enter(MPI_REGION);
}

void hs_mpi_leave(const char *fn)
{
    if (--depth != 0)
        return;
    if (heapscope__thread_region_restore)
        heapscope__thread_region_restore(saved_region);
    if (measured) {
        measured = 0;
        heapscope__caliper_end(fn);
    }
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
    hs_mpi_enter("MPI_Pcontrol");
    int rc = PMPI_Pcontrol(level);
    hs_mpi_leave("MPI_Pcontrol");
    return rc;
}

int MPI_Finalize(void)
{
    if (heapscope_dump)
        heapscope_dump();
    hs_mpi_enter("MPI_Finalize");
    int rc = PMPI_Finalize();
    hs_mpi_leave("MPI_Finalize");
    return rc;
}
