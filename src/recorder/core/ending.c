/*
 * ending.c — how the process is ending, when it is not a plain exit: a crash
 * (core/signals.c: which signal, si_code, fault address) or MPI_Abort (the MPI
 * layer calls heapscope__mpi_abort with the error code before PMPI_Abort).
 *
 * Once set, the process's final snapshots say so: their reason is "crash" or
 * "mpi-abort" (hsr_final_reason: the _exit that MPI_Abort ends with, or the
 * SIGTERM the launcher sends meanwhile, does not turn it back into "exit") and
 * they carry an ENDING chunk (profile_format.table). A fork child starts clean.
 */
#include <string.h>
#include <unistd.h>

#include "core/lifecycle.h"
#include "output/profile_writer.h"
#include "output/snapshot.h"

static struct {
    _Atomic unsigned kind; /* 0: none; HS_REASON_CRASH or HS_REASON_MPI_ABORT */
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
