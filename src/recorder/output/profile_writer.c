/*
 * profile_writer.c — the profile file: its name, its opening, and chunk encoding
 * (the rank and job in the name: process_identity.c; chunks built in buffers:
 * chunk_buffer.c).
 *
 * THE FORMAT IS DEFINED IN profile_format.h (header, chunk framing, every
 * payload). This file only encodes it; snapshot.c decides what goes in a snapshot.
 *
 *   heapscope.<host>.<pid>.hsp                       one file per process
 *   heapscope.<job>.r<rank>.<host>.<pid>.hsp          under MPI / Slurm
 *   ... .<n>.hsp                                      if the name is taken (exec)
 *
 *   [header 32 B][PROCESS][SETTINGS]                  written when the file opens
 *   [SNAPSHOT_BEGIN][MODULES][REGIONS][SIZE_COUNTS][API_COUNTS][STACK_TYPES]*[SNAPSHOT_END]
 *   [SNAPSHOT_BEGIN] ...                              one more per dump
 *
 * A chunk is built in an mmap'd buffer (hsr_buf), framed with its type, crc32 and
 * length, and whole snapshots are appended with write(2): no stdio, no malloc,
 * so a signal handler may write too.
 *
 * Several threads append (a dump, the timeline sampler, the trace writer), so
 * hsr_profile_write holds a lock for one whole buffer: the file is whole chunks at
 * every instant, never two buffers interleaved. The lock is an owner word (the
 * thread id), not a mutex, and is signal- and fork-safe:
 *   - while a thread holds it, SIGTERM/SIGINT/SIGUSR1 and the recorder's other
 *     dump signals (core/signals.c) are blocked on that thread, so a dump handler never runs on top
 *     of its own thread's write; it runs on another thread and waits (at most
 *     5 s) for the write to end, or after the write, on this one;
 *   - a handler of the program's own that calls heapscope_dump() on top of a
 *     write of its thread finds itself the owner and gives up (-1), never waits;
 *   - a fork child resets it (the writer was a thread the child does not have).
 * Sealing: a process about to end (exit, _exit, exec, a fatal signal) must not be
 * killed half-way through a background thread's write (exit_group stops other
 * threads between pages of a write). hsr_profile_seal() waits for the write in
 * progress and refuses writes of background threads (hsr_profile_background())
 * for a few seconds (an exec that fails lets them go on).
 *
 * Nothing lost silently (a full disk, a quota, an I/O error):
 *   - room is reserved ahead of the file's end (fallocate, FALLOC_FL_KEEP_SIZE: the
 *     size stays the data's, the blocks are ours), so a full disk shows as a refused
 *     reservation before any byte of a chunk is written. Stream chunks (timeline,
 *     trace) must leave room for the next snapshot besides their own (twice the
 *     largest snapshot so far, at least HSR_PROFILE_ROOM_MIN): the counts are what a
 *     full disk must not take. The room left is given back (ftruncate to the data's
 *     size) after the snapshot of a process that is ending (sealed). File systems
 *     without fallocate just get plain writes;
 *   - a write that fails part-way is cut back (ftruncate) to the last whole chunk, so
 *     the file stays readable;
 *   - the first failure is said once on stderr (file, byte, errno text) and marked in
 *     the file's header (flags, write_errno, lost_at: rewritten in place, which needs
 *     no new block), so `heapscope record` and every report say the file is
 *     incomplete. The program goes on; later chunks are still tried (the disk may
 *     have room again). A file whose header could not be written is left empty and
 *     written no more.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "core/lifecycle.h"
#include "core/pool.h"
#include "core/proc_files.h"
#include "output/job_file.h"
#include "output/process_identity.h"
#include "output/profile_writer.h"
#include "stacks/sampling.h"

static int fd = -1;
static int fd_pid;   /* getpid() when the file was opened */
static dev_t fd_dev; /* which file fd is: programs that close every descriptor */
static ino_t fd_ino; /* (daemons, MPI launchers' children) may have closed or reused it */
static char path[4096];

/* Written under the writer lock (below), reset when a file opens. */
static uint64_t eof;                   /* bytes of whole chunks in the file */
static uint64_t room_end;              /* blocks reserved up to here */
static uint64_t keep_room;             /* what a stream write must leave for the next snapshot */
static int room_off;                   /* fallocate is not supported here: plain writes */
static int dead;                       /* the header could not be written: no more writes */
static _Atomic int failed;             /* a write failed: said, and marked in the header */
static uint8_t header[HS_HEADER_SIZE]; /* as written: mark_header rewrites its end */
static uint8_t settings[1024];         /* the SETTINGS chunk as written (hsr_profile_unwinder) */
static size_t settings_len;            /* 0: none kept (too long) */
static uint64_t settings_at;           /* its offset in the file */
static uLong file_types;               /* crc32 of the types of the chunks written so far */

/* The running crc32 of the types (u32) of the chunks of b from offset `from` to
 * `to`; returns the offset of the chunk at `to` or after. */
static size_t types_crc(uLong *crc, const struct hsr_buf *b, size_t from, size_t to)
{
    size_t at = from;
    while (at + HS_CHUNK_HEADER_SIZE <= to) {
        uint64_t len;
        memcpy(&len, b->p + at + 8, 8);
        *crc = crc32_z(*crc, b->p + at, 4);
        at += HS_CHUNK_HEADER_SIZE + len;
    }
    return at;
}

/* ---- the file ---- */

int hsr_profile_is_open(void) { return fd >= 0; }
const char *hsr_profile_path(void) { return path; }
int hsr_profile_pid(void) { return fd_pid; }
static int file_rank = -1;
int hsr_profile_rank(void) { return file_rank; }

static int fd_is_ours(void) { return hsr_fd_is(fd, fd_dev, fd_ino); }

/* fd still our file? If the program closed it (or reused the number), open the
 * file again by name, leaving the program's descriptor alone: only in a thread of
 * the program's, never in one of ours, whose open() would take the lowest free
 * number while the program may be between close(0) and open or dup2 onto 0. */
static int check_fd(void)
{
    if (fd_is_ours())
        return 0;
    if (hsr_own_thread()) {
        errno = EBADF;
        return -1;
    }
    int f = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (f < 0)
        return -1;
    if (!hsr_fd_is(f, fd_dev, fd_ino)) {
        close(f); /* replaced by another file: not ours to append to */
        return -1;
    }
    fd = hsr_fd_high(f);
    room_end = eof; /* a new description: reserve again */
    return 0;
}

int hsr_profile_writable_here(void) { return !hsr_own_thread() || fd_is_ours(); }

/* ---- the writer lock (see the top of this file) ---- */

static _Atomic int writer;            /* thread id of the writing thread, 0 = free */
static _Atomic uint64_t sealed_until; /* CLOCK_MONOTONIC ns */
static HSR_TLS int background;

static int tid(void) { return (int)syscall(SYS_gettid); }

static int lock_writer(void)
{
    int me = tid();
    if (atomic_load(&writer) == me)
        return -1; /* a handler on top of this thread's own write */
    for (int waited = 0;; waited++) {
        int free_ = 0;
        if (atomic_compare_exchange_strong(&writer, &free_, me))
            return 0;
        if (waited > HSR_WRITE_LOCK_WAIT_MS)
            return -1;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

static void unlock_writer(void) { atomic_store(&writer, 0); }

void hsr_profile_background(void) { background = 1; }
void hsr_profile_foreground(void) { background = 0; }

void hsr_profile_seal(void)
{
    atomic_store(&sealed_until, hsr_now_ns(CLOCK_MONOTONIC) + HSR_SEAL_NS);
    if (lock_writer() == 0) /* the write in progress, if any, has ended */
        unlock_writer();
}

int hsr_profile_sealed(void) { return hsr_now_ns(CLOCK_MONOTONIC) < atomic_load(&sealed_until); }

void hsr_profile_after_fork_child(void)
{
    atomic_store(&writer, 0);
    atomic_store(&sealed_until, 0);
}

/* The file header (version 2, no failure marked), its crc sealed: a profile's and the
 * job file's (job_file.c). */
void hsr_header_append(struct hsr_buf *b)
{
    size_t at = b->len;
    hsr_buf_bytes(b, HS_MAGIC, 8);
    hsr_buf_u32(b, HS_FORMAT_VERSION);
    hsr_buf_u32(b, HS_HEADER_SIZE);
    hsr_buf_u64(b, hsr_start_real_ns);
    hsr_buf_u32(b, 0); /* flags: HS_HEADER_WRITE_FAILED is set in place (mark_header) */
    hsr_buf_u32(b, 0); /* write_errno */
    hsr_buf_u64(b, 0); /* lost_at */
    hsr_buf_u32(b, 0); /* header_crc, below */
    hsr_buf_u32(b, 0); /* reserved */
    if (!b->failed) {
        uint32_t crc = (uint32_t)crc32_z(0, b->p + at, 40);
        memcpy(b->p + at + 40, &crc, 4);
    }
}

/* ---- failures: said once, marked in the header (see the top of this file) ---- */

/* The header's crc over its first 40 bytes, at byte 40. */
static void seal_header(void)
{
    uint32_t crc = (uint32_t)crc32_z(0, header, 40);
    memcpy(header + 40, &crc, 4);
}

/* The header's flags, write_errno, lost_at and header_crc, rewritten in place through
 * a descriptor of its own (fd appends: pwrite on it would append too). */
static void mark_header(int err, uint64_t at)
{
    if (at < HS_HEADER_SIZE)
        return; /* no whole header: the file's size says it all */
    uint32_t flags = HS_HEADER_WRITE_FAILED, e = (uint32_t)err;
    memcpy(header + 24, &flags, 4); /* offsetof(header, flags) */
    memcpy(header + 28, &e, 4);
    memcpy(header + 32, &at, 8);
    seal_header();
    int f = open(path, O_WRONLY | O_CLOEXEC);
    if (f < 0)
        return;
    (void)!pwrite(f, header + 24, HS_HEADER_SIZE - 24, 24);
    close(f);
}

/* SETTINGS' unwinder (its last field), changed after the file was opened: the chunk
 * rewritten in place, as the header is. */
void hsr_profile_unwinder(uint32_t unwinder)
{
    hsr_settings.unwinder = unwinder; /* a fork child's file is written with it */
    if (!settings_len || dead)
        return;
    memcpy(settings + settings_len - 4, &unwinder, 4);
    hsr_chunk_seal(settings, settings_len - HS_CHUNK_HEADER_SIZE);
    int f = open(path, O_WRONLY | O_CLOEXEC);
    if (f < 0)
        return;
    (void)!pwrite(f, settings, settings_len, (off_t)settings_at);
    close(f);
}

void hsr_profile_lost(int err, const char *what)
{
    int was = 0;
    if (!atomic_compare_exchange_strong(&failed, &was, 1))
        return;
    uint64_t at = eof;
    mark_header(err, at);
    char msg[4400];
    /* strerrordesc_np, not strerror: no message catalog to load (with malloc), which the
     * timeline's thread must not call (core/single_thread.c) */
    const char *why = strerrordesc_np(err);
    snprintf(msg, sizeof msg,
             "cannot write %s to the profile %s at byte %llu: %s (the program goes on; "
             "this profile is incomplete)",
             what, path, (unsigned long long)at, why ? why : "unknown error");
    hsr_warn(msg);
}

/* Room for n more bytes: 0, or the errno of a refused reservation. */
static int make_room(uint64_t n)
{
    uint64_t want = eof + n;
    if (room_off || want <= room_end)
        return 0;
    int err = 0;
    for (int exact = 0; exact < 2; exact++) { /* a step ahead first, then just enough */
        uint64_t to = exact ? want : want + HSR_PROFILE_ROOM_STEP;
        if (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)eof, (off_t)(to - eof)) == 0) {
            room_end = to;
            return 0;
        }
        err = errno;
        if (err == EINTR) {
            exact--;
            continue;
        }
        if (err == EBADF)
            return err; /* closed since check_fd: not a file system without reservations */
        if (err != ENOSPC && err != EDQUOT && err != EFBIG) {
            room_off = 1; /* EOPNOTSUPP and the like: no reservation on this file system */
            return 0;
        }
    }
    return err;
}

/* The room kept ahead given back: the file's blocks are its data's again. */
static void give_back_room(void)
{
    if (room_end > eof && ftruncate(fd, (off_t)eof) == 0)
        room_end = eof;
}

/* SNAPSHOT_END.types_crc (the buffer's last chunk): the types of every chunk of the
 * file, and of the buffer before it. Under the writer lock: no chunk comes between. */
static void seal_snapshot(struct hsr_buf *b)
{
    uLong crc = file_types;
    size_t end = 0, at = 0;
    while (at + HS_CHUNK_HEADER_SIZE <= b->len) { /* the last chunk's offset */
        end = at;
        at = types_crc(&(uLong){0}, b, at, at + HS_CHUNK_HEADER_SIZE);
    }
    uint32_t type;
    memcpy(&type, b->p + end, 4);
    if (type != HS_CHUNK_SNAPSHOT_END || b->len - end < HS_CHUNK_HEADER_SIZE + 8)
        return; /* (a later version may append fields to SNAPSHOT_END) */
    types_crc(&crc, b, 0, end);
    uint32_t c = (uint32_t)crc;
    memcpy(b->p + end + HS_CHUNK_HEADER_SIZE + 4, &c, 4);
    hsr_chunk_end(b, end);
}

static int write_all(struct hsr_buf *b, int snapshot)
{
    if (dead)
        return -1;
    int closed = fd < 0 || check_fd() != 0;
    if (closed && fd >= 0 && hsr_own_thread())
        return HSR_PROFILE_DEFERRED; /* the program closed it: see check_fd */
    if (closed) {
        hsr_profile_lost(errno ? errno : EBADF, "a chunk (the file was closed or replaced)");
        return -1;
    }
    const char *what = eof == 0 ? "its header" : snapshot ? "a snapshot" : "a chunk";
    if (snapshot && eof > 0)
        seal_snapshot(b);
    int err = make_room(b->len + (snapshot ? 0 : keep_room));
    if (err == EBADF && hsr_own_thread())
        return HSR_PROFILE_DEFERRED; /* the program closed the file meanwhile */
    if (err) {
        hsr_profile_lost(err, snapshot ? what : "a chunk (room kept for the snapshot)");
        if (eof == 0)
            dead = 1;
        return -1;
    }
    size_t done = 0;
    while (done < b->len) {
        ssize_t n = write(fd, b->p + done, b->len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EBADF && done == 0 && hsr_own_thread())
            return HSR_PROFILE_DEFERRED; /* closed meanwhile, nothing written */
        if (n <= 0) {
            err = n < 0 ? errno : EIO;
            if (ftruncate(fd, (off_t)eof) == 0 || done == 0) /* whole chunks only */
                done = 0;
            else
                eof += done; /* cannot cut: the reader sees a chunk cut short */
            hsr_profile_lost(err, what);
            if (eof == 0)
                dead = 1;
            return -1;
        }
        done += (size_t)n;
    }
    types_crc(&file_types, b, eof == 0 ? HS_HEADER_SIZE : 0, b->len);
    eof += b->len;
    if (snapshot && 2 * b->len > keep_room)
        keep_room = 2 * b->len;
    return 0;
}

static int write_locked(struct hsr_buf *b, int snapshot)
{
    if (fd < 0)
        return -1;
    if (b->failed) {
        hsr_profile_lost(ENOMEM, snapshot ? "a snapshot" : "a chunk");
        return -1;
    }
    if (background && hsr_profile_sealed())
        return -1;
    sigset_t dump_signals, old;
    hsr_dump_signal_set(&dump_signals);
    pthread_sigmask(SIG_BLOCK, &dump_signals, &old);
    int rc = -1;
    if (lock_writer() == 0) {
        /* sealed while this thread waited for the lock? */
        if (!(background && hsr_profile_sealed()))
            rc = write_all(b, snapshot);
        if (snapshot && hsr_profile_sealed())
            give_back_room(); /* the process is ending: this was its last snapshot */
        unlock_writer();
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

int hsr_profile_write(struct hsr_buf *b) { return write_locked(b, 0); }
int hsr_profile_write_snapshot(struct hsr_buf *b) { return write_locked(b, 1); }

/* A fork child lets go of the parent's file without touching it: no ftruncate to give
 * back the room. The child's eof is the parent's at the fork, stale as soon as the
 * parent writes again; cutting the file there dropped the parent's newer chunks, and a
 * later child, forked after such a cut, grew the file back with zeros to its own
 * stale eof (mpirun's profile, forking a child per rank, read as corrupt). */
void hsr_profile_close(void)
{
    if (fd_is_ours())
        close(fd); /* (not a descriptor the program reused) */
    fd = -1;
}

static void read_file(const char *name, struct hsr_buf *into)
{
    int f = open(name, O_RDONLY | O_CLOEXEC);
    if (f < 0)
        return;
    char chunk[4096];
    ssize_t n;
    while ((n = read(f, chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            hsr_buf_bytes(into, chunk, (size_t)n);
    close(f);
}

static void write_start(int rank)
{
    struct hsr_buf b = {0};
    char host[256] = "", exe[4096] = "";
    gethostname(host, sizeof host - 1);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    struct hsr_buf cmd = {0};
    read_file("/proc/self/cmdline", &cmd);
    size_t cmdlen = cmd.len;
    if (cmdlen && cmd.p[cmdlen - 1] == 0)
        cmdlen--; /* argv joined by NUL: no trailing separator */

    hsr_header_append(&b);
    if (!b.failed)
        memcpy(header, b.p, HS_HEADER_SIZE); /* mark_header rewrites its end in place */

    size_t c = hsr_chunk_begin(&b, HS_CHUNK_PROCESS);
    hsr_buf_u32(&b, (uint32_t)getpid());
    hsr_buf_u32(&b, (uint32_t)getppid());
    hsr_buf_u32(&b, (uint32_t)rank);
    hsr_buf_u32(&b, 0);
    hsr_buf_u64(&b, hsr_start_real_ns);
    hsr_buf_str(&b, host, strlen(host));
    hsr_buf_str(&b, exe, strlen(exe));
    hsr_buf_str(&b, cmd.p ? (const char *)cmd.p : "", cmdlen);
    hsr_buf_str(&b, hsr_profile_job_id(), strlen(hsr_profile_job_id()));
    hsr_buf_str(&b, HSR_VERSION, strlen(HSR_VERSION));
    hsr_chunk_end(&b, c);

    c = hsr_chunk_begin(&b, HS_CHUNK_SETTINGS);
    hsr_buf_str(&b, hsr_settings.stack_sizes, strlen(hsr_settings.stack_sizes));
    hsr_buf_str(&b, hsr_settings.stack_regions, strlen(hsr_settings.stack_regions));
    hsr_buf_u32(&b, hsr_settings.max_depth);
    hsr_buf_u32(&b, hsr_settings.unwinder);
    hsr_chunk_end(&b, c);
    settings_len = !b.failed && b.len - c <= sizeof settings ? b.len - c : 0;
    if (settings_len)
        memcpy(settings, b.p + c, settings_len);
    settings_at = c; /* b goes at the start of the new file */

    if (hsr_sample_mean) { /* the reader turns sample counts into estimates with it */
        c = hsr_chunk_begin(&b, HS_CHUNK_SAMPLING);
        hsr_buf_u64(&b, hsr_sample_mean);
        hsr_buf_u64(&b, 0);
        hsr_chunk_end(&b, c);
    }

    (void)hsr_profile_write_snapshot(&b); /* a failure is said and leaves the file empty */
    hsr_buf_release(&cmd);
    hsr_buf_release(&b);
}

/* Opens a new file for this process. Returns 0, or -1 (and warns once). */
int hsr_profile_open(void)
{
    /* Absolute, so the file can be found again (check_fd) after a chdir. */
    char dir[2048], cwd[1024];
    if (hsr_settings.output_dir[0] != '/' && getcwd(cwd, sizeof cwd))
        snprintf(dir, sizeof dir, "%s/%s", cwd, hsr_settings.output_dir);
    else
        snprintf(dir, sizeof dir, "%s", hsr_settings.output_dir);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    for (char *p = host; *p; p++) { /* the short host name, safe in a file name */
        if (*p == '.' && p != host) {
            *p = 0;
            break;
        }
        if (*p == '/' || *p == '.')
            *p = '_';
    }
    char base[3072];
    int rank = hsr_mpi_rank();
    file_rank = rank;
    if (rank >= 0)
        snprintf(base, sizeof base, "%s/heapscope.%s.r%d.%s.%d", dir,
                 *hsr_profile_job_id() ? hsr_profile_job_id() : "job", rank, host, (int)getpid());
    else
        snprintf(base, sizeof base, "%s/heapscope.%s.%d", dir, host, (int)getpid());
    if (mkdir(dir, 0777) == 0) /* one level, if missing; errors show at open */
        hsr_owner_may_use(-1, dir);
    for (int n = 0; n < 1000; n++) {
        if (n == 0)
            snprintf(path, sizeof path, "%s.hsp", base);
        else
            snprintf(path, sizeof path, "%s.%d.hsp", base, n);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_APPEND, 0644);
        if (fd >= 0 || errno != EEXIST)
            break;
    }
    if (fd < 0) {
        char msg[4200];
        snprintf(msg, sizeof msg, "cannot create a profile file in '%s' (%s): not recording", dir,
                 strerror(errno));
        hsr_warn(msg);
        path[0] = 0;
        return -1;
    }
    hsr_owner_may_use(fd, NULL);
    fd_pid = (int)getpid();
    fd = hsr_fd_high(fd);
    eof = room_end = 0;
    file_types = crc32_z(0, NULL, 0);
    keep_room = HSR_PROFILE_ROOM_MIN;
    room_off = dead = 0;
    atomic_store(&failed, 0);
    struct stat st;
    if (fstat(fd, &st) == 0) {
        fd_dev = st.st_dev;
        fd_ino = st.st_ino;
    }
    write_start(rank);
    if (!dead)
        (void)make_room(keep_room); /* held from the start; a refusal is said at a write */
    return 0;
}
