/*
 * last_thread.c — the recorder's own threads (the timeline sampler, the trace
 * writer: helpers) never keep a process alive.
 *
 * glibc ends a process when its last thread ends: that thread calls exit(0). The
 * helpers are threads too, so a program whose main thread calls pthread_exit would
 * live on after its own last thread, with only the helpers, which block every
 * signal: SIGTERM and SIGINT would stay pending, and only SIGKILL would end it,
 * without a snapshot. So the pthread_exit hook (hooks/process.c) tells us when main
 * leaves; from then on each helper looks, every HSR_LAST_THREAD_POLL_MS, whether
 * main has ended (its /proc state: a zombie) and at the process's thread count
 * (/proc/self/stat, the zombie main included). The first helper that finds only
 * helpers left does what glibc would have done in the program's last thread: it
 * unblocks every signal (one sent meanwhile is delivered now, as it would have
 * been: a dump signal writes its snapshot and kills, as usual), becomes an ordinary
 * thread of the program (the re-entrancy guard off, not a background writer, its
 * allocations counted without counting it as a thread) and calls exit(0): the
 * atexit handlers and destructors run, and the final snapshot says "last-thread"
 * (PROCESS_END).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/proc_files.h"
#include "count/thread.h"
#include "hooks/hooks.h"
#include "output/profile_writer.h"

static _Atomic int main_gone;    /* main called pthread_exit */
static _Atomic int helpers;      /* helper threads started in this process */
static _Atomic int ending;       /* a helper is ending the process */
static _Atomic uint64_t next_ns; /* next look at the thread count */

void hsr_helper_thread_start(void) { atomic_fetch_add(&helpers, 1); }

void hsr_main_thread_exits(void)
{
    if (syscall(SYS_gettid) == getpid())
        atomic_store(&main_gone, 1);
}

int hsr_main_thread_gone(void) { return atomic_load(&main_gone); }

void hsr_helpers_after_fork_child(void)
{
    atomic_store(&main_gone, 0); /* the forking thread is the child's main (tid = pid) */
    atomic_store(&helpers, 0);   /* restarted in the child, they count again */
    atomic_store(&ending, 0);
    atomic_store(&next_ns, 0);
}

const char *hsr_stat_field(const char *buf, int field)
{
    const char *p = NULL;
    for (const char *q = buf; *q; q++)
        if (*q == ')')
            p = q;
    for (int f = 2; p && f < field; f++) /* p ends field f */
        p = strchr(p + 1, ' ');
    return p ? p + 1 : NULL;
}

const char *hsr_proc_stat_field(const char *path, int field, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n <= 0)
        return NULL;
    buf[n] = 0;
    return hsr_stat_field(buf, field);
}

/* From our own descriptor: a helper's open() could take the descriptor the program
 * is about to dup2 onto. By path only when the program closed ours (its main thread
 * has left by then; never to keep a process alive for want of a descriptor). */
static const char *stat_field(enum hsr_proc_file which, const char *path, int field, char *buf,
                              size_t cap)
{
    if (hsr_proc_file_read(which, buf, cap) > 0)
        return hsr_stat_field(buf, field);
    return hsr_proc_stat_field(path, field, buf, cap);
}

/* Only the recorder's helpers are left: main has ended (a zombie until the process
 * ends, it still counts in num_threads) and every other thread is a helper. */
static int helpers_alone(void)
{
    char buf[1024], path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)getpid());
    const char *state = stat_field(HSR_PROC_MAIN_STAT, path, 3, buf, sizeof buf);
    if (!state || (*state != 'Z' && *state != 'X'))
        return 0; /* main is still running its pthread_exit (its thread_local destructors) */
    const char *threads = stat_field(HSR_PROC_STAT, "/proc/self/stat", 20, buf, sizeof buf);
    long n = threads ? strtol(threads, NULL, 10) : -1;
    return n > 0 && n - 1 <= atomic_load(&helpers);
}

static void end_process(void)
{
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, NULL); /* a pending signal acts now */
    hsr_profile_foreground();
    hsr_thread_stand_in();
    hsr_end_exit(HS_END_LAST_THREAD, 0);
    hsr_guard = 0;
    void (*real_exit)(int) = hsr_next("exit"); /* (not our hook: it would say "exit") */
    (real_exit ? real_exit : exit)(0);
}

void hsr_helper_poll(void)
{
    if (!atomic_load_explicit(&main_gone, memory_order_relaxed))
        return;
    uint64_t now = hsr_now_ns(CLOCK_MONOTONIC);
    if (now < atomic_load(&next_ns))
        return;
    atomic_store(&next_ns, now + (uint64_t)HSR_LAST_THREAD_POLL_MS * 1000000u);
    int none = 0;
    if (helpers_alone() && atomic_compare_exchange_strong(&ending, &none, 1))
        end_process();
}
