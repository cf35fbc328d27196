/*
 * mpi_library.c — the MPI library the process runs on, named by the MPI layer at the
 * process's first MPI call (heapscope__mpi_library, layer_abi.h): written at once as
 * one MPI_LIBRARY stream chunk, and kept for the job file, where rank 0 puts it with
 * its command line (JOB_MPI_LIBRARY, JOB_COMMAND; profile_format.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "core/guard.h"
#include "output/mpi_library.h"

static char text[8192]; /* MPICH's MPI_MAX_LIBRARY_VERSION_STRING, the largest */
static uint32_t version, subversion;
static atomic_int named;

static void library_payload(struct hsr_buf *b)
{
    hsr_buf_u32(b, version);
    hsr_buf_u32(b, subversion);
    hsr_buf_str(b, text, strlen(text));
}

__attribute__((visibility("default"))) void heapscope__mpi_library(int v, int sub, const char *s)
{
    if (atomic_load(&named))
        return;
    int saved = hsr_guard;
    hsr_guard = 1;
    size_t n = s ? strnlen(s, sizeof text - 1) : 0;
    memcpy(text, s ? s : "", n);
    text[n] = 0;
    version = (uint32_t)v;
    subversion = (uint32_t)sub;
    atomic_store(&named, 1);
    if (hsr_profile_is_open()) {
        struct hsr_buf b = {0};
        size_t c = hsr_chunk_begin(&b, HS_MPI_LIBRARY);
        library_payload(&b);
        hsr_chunk_end(&b, c);
        if (!b.failed)
            (void)hsr_profile_write(&b); /* a failure is said and marked by the writer */
        hsr_buf_release(&b);
    }
    hsr_guard = saved;
}

void hsr_mpi_library_job_chunks(struct hsr_buf *b)
{
    if (atomic_load(&named)) {
        size_t c = hsr_chunk_begin(b, HS_JOB_MPI_LIBRARY);
        library_payload(b);
        hsr_chunk_end(b, c);
    }
    struct hsr_buf cmd = {0}; /* any length, as PROCESS.cmdline */
    int f = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (f >= 0) {
        char part[4096];
        ssize_t r;
        while ((r = read(f, part, sizeof part)) > 0 || (r < 0 && errno == EINTR))
            if (r > 0)
                hsr_buf_bytes(&cmd, part, (size_t)r);
        close(f);
    }
    size_t len = cmd.len;
    if (len && cmd.p[len - 1] == 0)
        len--; /* argv joined by NUL: no trailing separator (as PROCESS.cmdline) */
    size_t c = hsr_chunk_begin(b, HS_JOB_COMMAND);
    hsr_buf_str(b, cmd.p ? (const char *)cmd.p : "", len);
    hsr_chunk_end(b, c);
    hsr_buf_release(&cmd);
}
