/*
 * proc_files.h — the recorder's own descriptors on /proc/self (proc_files.c): opened
 * where the program cannot be running, read by the recorder's threads.
 */
#ifndef HSR_PROC_FILES_H
#define HSR_PROC_FILES_H

#include <sys/types.h>

#include "common.h"

enum hsr_proc_file {
    HSR_PROC_STATM,        /* RSS from the kernel's counters */
    HSR_PROC_SMAPS_ROLLUP, /* RSS and PSS, a page-table walk (Linux >= 4.14) */
    HSR_PROC_STAT,         /* the process's thread count */
    HSR_PROC_MAIN_STAT,    /* /proc/self/task/<pid>/stat: the main thread's state */
    HSR_PROC_PAGEMAP,      /* record --access: which pages are present */
    HSR_PROC_FILES
};

/* Opens them all (idempotent); a fork child opens its own before fork returns. */
HSR_HIDDEN void hsr_proc_files_open(void);
/* Our descriptor on the file, or -1 (errno: why it could not be opened, EBADF when
 * the program closed or reused it). */
HSR_HIDDEN int hsr_proc_file_fd(enum hsr_proc_file which);
/* The whole (small) file from its start, NUL-terminated: bytes read, or -1. */
HSR_HIDDEN ssize_t hsr_proc_file_read(enum hsr_proc_file which, char *buf, size_t cap);
/* The timeline's sampler and the access watcher mark themselves: a thread of ours
 * never opens a file the program closed (only the program's own threads do). */
HSR_HIDDEN void hsr_own_thread_mark(void);
HSR_HIDDEN int hsr_own_thread(void);
/* fd is open on the file (dev, ino): not closed, nor its number reused by the program. */
HSR_HIDDEN int hsr_fd_is(int fd, dev_t dev, ino_t ino);
/* f moved to a close-on-exec descriptor >= 512, out of the program's way. */
HSR_HIDDEN int hsr_fd_high(int f);

#endif
