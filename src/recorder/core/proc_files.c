/*
 * proc_files.c — the recorder's descriptors on /proc/self, opened once per process.
 *
 * The timeline's sampler, the last-thread helper and the access watcher read
 * /proc/self from threads of their own while the program runs. An open() there
 * takes the lowest free descriptor: between a program's close(0) and its
 * dup2(pipe, 0) — what an MPI launcher's proxy does in a fork child before exec —
 * it takes 0, and the program's dup2 fails with EBUSY (the number is claimed, its
 * file not installed yet) or closes our file under us. So the files are opened
 * only where no program code runs alongside: at the recorder's start and in the
 * fork child's handler, before fork returns. They live at descriptors >= 512 and
 * are read with pread. A descriptor the program closed or reused (fstat names
 * another file) is opened again only by a thread of the program's (an MPI call's
 * calipers, a snapshot): until then our threads' readers say "unknown".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/proc_files.h"

static struct {
    int fd, error; /* error: errno of the failed open */
    int lost;      /* the program closed it: to open again in one of its threads */
    const char *path;
    dev_t dev;
    ino_t ino;
} files[HSR_PROC_FILES] = {[0 ... HSR_PROC_FILES - 1] = {.fd = -1, .error = EBADF}};

static HSR_TLS int own_thread;
void hsr_own_thread_mark(void) { own_thread = 1; }
int hsr_own_thread(void) { return own_thread; }

int hsr_fd_high(int f)
{
    int high = fcntl(f, F_DUPFD_CLOEXEC, 512);
    if (high < 0)
        return f; /* (a descriptor limit under 512: the low one is still ours) */
    close(f);
    return high;
}

int hsr_fd_is(int fd, dev_t dev, ino_t ino)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* fd is still the file we opened (the program may close every descriptor). */
static int still_ours(enum hsr_proc_file which)
{
    return hsr_fd_is(files[which].fd, files[which].dev, files[which].ino);
}

static void open_one(enum hsr_proc_file which, const char *path)
{
    struct stat st;
    files[which].path = path;
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0 || fstat(f, &st) != 0) {
        files[which].error = errno;
        if (f >= 0)
            close(f);
        files[which].fd = -1;
        return;
    }
    files[which].fd = hsr_fd_high(f);
    files[which].dev = st.st_dev;
    files[which].ino = st.st_ino;
}

static char main_stat[64]; /* /proc/self/task/<pid>/stat */

static void open_all(void)
{
    snprintf(main_stat, sizeof main_stat, "/proc/self/task/%d/stat", (int)getpid());
    open_one(HSR_PROC_STATM, "/proc/self/statm");
    open_one(HSR_PROC_SMAPS_ROLLUP, "/proc/self/smaps_rollup");
    open_one(HSR_PROC_STAT, "/proc/self/stat");
    open_one(HSR_PROC_MAIN_STAT, main_stat);
    open_one(HSR_PROC_PAGEMAP, "/proc/self/pagemap");
}

/* The parent's descriptors name the parent's /proc entries. Registered before any
 * other handler of the recorder's, so it runs first in the child. */
static void after_fork_child(void)
{
    for (int i = 0; i < HSR_PROC_FILES; i++)
        if (still_ours(i))
            close(files[i].fd);
    open_all();
}

void hsr_proc_files_open(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    open_all();
    pthread_atfork(NULL, NULL, after_fork_child);
}

int hsr_proc_file_fd(enum hsr_proc_file which)
{
    if (files[which].fd >= 0 && !still_ours(which)) {
        files[which].fd = -1; /* the program closed it: the number is its own now */
        files[which].error = EBADF;
        files[which].lost = 1;
    }
    if (files[which].fd < 0 && files[which].lost && !own_thread) {
        files[which].lost = 0;
        open_one(which, files[which].path); /* in a thread of the program's: no race */
    }
    if (files[which].fd < 0) {
        errno = files[which].error;
        return -1;
    }
    return files[which].fd;
}

ssize_t hsr_proc_file_read(enum hsr_proc_file which, char *buf, size_t cap)
{
    int f = hsr_proc_file_fd(which);
    if (f < 0)
        return -1;
    size_t len = 0;
    while (len + 1 < cap) {
        ssize_t n = pread(f, buf + len, cap - 1 - len, (off_t)len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = 0;
    return len ? (ssize_t)len : -1;
}
