/*
 * ending.c — how the process is ending, when it is not a plain exit: a crash
 * (core/signals.c: which signal, si_code, fault address), another signal whose
 * default ends the process (SIGHUP, SIGPIPE ...: which one) or MPI_Abort (the MPI
 * layer calls heapscope__mpi_abort with the error code before PMPI_Abort).
 *
 * Once set, the process's final snapshots say so: their reason is "crash",
 * "mpi-abort" or "signal" (hsr_final_reason: the _exit that MPI_Abort ends with, or the
 * SIGTERM the launcher sends meanwhile, does not turn it back into "exit") and
 * they carry an ENDING chunk (profile_format.table). A fork child starts clean.
 *
 * Every final snapshot (exit, _exit, exec, a signal, a crash, MPI_Abort) also says
 * how the process ended (PROCESS_END): which exit call and its status, as the exit
 * hooks saw it (hooks/process.c: exit, _exit, _Exit, quick_exit; main returning is an
 * exit whose status is not seen), or the last thread ending (core/last_thread.c); and
 * two facts a job report needs to tell a rank torn down from one that finished: the
 * MPI layer saw MPI calls but no MPI_Finalize, and the parent (the launcher) had
 * already ended.
 */
#include <string.h>
#include <unistd.h>

#include "core/lifecycle.h"
#include "output/profile_writer.h"
#include "output/snapshot.h"

static struct {
    _Atomic unsigned kind; /* 0: none; HS_REASON_CRASH, HS_REASON_MPI_ABORT or _SIGNAL */
    uint32_t signal;
    int32_t si_code, error_code;
    uint64_t address;
} ending;

void hsr_ending_set(unsigned kind, int sig, int si_code, int error_code, uint64_t address)
{
    ending.signal = (uint32_t)sig;
    ending.si_code = si_code;
    ending.error_code = error_code;
    ending.address = address;
    atomic_store(&ending.kind, kind);
}

void hsr_ending_clear(void) { atomic_store(&ending.kind, 0); }
int hsr_ending_is_set(void) { return atomic_load(&ending.kind) != 0; }

/* ---- how the process ends (PROCESS_END) ---- */

static struct {
    _Atomic int how; /* HS_END_*, -1: not seen (main returned, or no exit call yet) */
    _Atomic int status;
    _Atomic int status_known;
    _Atomic int mpi_started, mpi_finalized;
    int start_ppid;
} end = {.how = -1};

void hsr_end_start(void)
{
    atomic_store(&end.how, -1);
    atomic_store(&end.status_known, 0);
    atomic_store(&end.mpi_started, 0);
    atomic_store(&end.mpi_finalized, 0);
    end.start_ppid = (int)getppid();
}

/* The last call wins: an atexit handler's _exit(3) is the status the process has. */
void hsr_end_exit(unsigned how, int status)
{
    atomic_store(&end.status, status);
    atomic_store(&end.status_known, 1);
    atomic_store(&end.how, (int)how);
}

void hsr_end_mpi_started(void) { atomic_store(&end.mpi_started, 1); }

static unsigned end_how(unsigned reason)
{
    switch (reason) {
    case HS_REASON_EXIT: {
        int how = atomic_load(&end.how);
        return how < 0 ? HS_END_EXIT : (unsigned)how;
    }
    case HS_REASON_EXEC:
        return HS_END_EXEC;
    case HS_REASON_MPI_ABORT:
        return HS_END_MPI_ABORT;
    default: /* SIGTERM, SIGINT, a crash */
        return HS_END_SIGNAL;
    }
}

int hsr_reason_final(unsigned reason)
{
    return reason != HS_REASON_API && reason != HS_REASON_SIGUSR1 && reason != HS_REASON_PERIODIC;
}

void hsr_process_end_write(struct hsr_buf *b, unsigned reason)
{
    if (!hsr_reason_final(reason))
        return; /* the process goes on */
    unsigned how = end_how(reason);
    int known = how != HS_END_SIGNAL && how != HS_END_EXEC && how != HS_END_MPI_ABORT &&
                atomic_load(&end.status_known);
    uint32_t flags = known ? HS_END_STATUS_KNOWN : 0;
    if (atomic_load(&end.mpi_started) && !atomic_load(&end.mpi_finalized))
        flags |= HS_END_MPI_UNFINALIZED;
    if ((int)getppid() != end.start_ppid)
        flags |= HS_END_ORPHANED;
    size_t c = hsr_chunk_begin(b, HS_PROCESS_END);
    hsr_buf_u32(b, how);
    hsr_buf_u32(b, known ? (uint32_t)atomic_load(&end.status) : 0);
    hsr_buf_u32(b, flags);
    hsr_buf_u32(b, 0);
    hsr_chunk_end(b, c);
}

/* For the MPI layer (layer_abi.h): MPI_Finalize is reached (before its dump). */
__attribute__((visibility("default"))) void heapscope__mpi_finalize(void)
{
    atomic_store(&end.mpi_finalized, 1);
}

unsigned hsr_final_reason(unsigned reason)
{
    unsigned kind = atomic_load(&ending.kind);
    return kind ? kind : reason;
}

void hsr_ending_write(struct hsr_buf *b, unsigned reason)
{
    unsigned kind = atomic_load(&ending.kind);
    if (!kind || reason != kind)
        return;
    size_t c = hsr_chunk_begin(b, HS_ENDING);
    hsr_buf_u32(b, kind);
    hsr_buf_u32(b, ending.signal);
    hsr_buf_u32(b, (uint32_t)ending.si_code);
    hsr_buf_u32(b, (uint32_t)ending.error_code);
    hsr_buf_u64(b, ending.address);
    hsr_chunk_end(b, c);
}

/* For the MPI layer (layer_abi.h): the snapshot of a process calling MPI_Abort. */
__attribute__((visibility("default"))) int heapscope__mpi_abort(int errorcode)
{
    if (!atomic_load(&hsr_recording) || hsr_profile_pid() != (int)getpid())
        return -1;
    hsr_ending_set(HS_REASON_MPI_ABORT, 0, 0, errorcode, 0);
    hsr_profile_seal();
    return hsr_snapshot(HS_REASON_MPI_ABORT, 0);
}
