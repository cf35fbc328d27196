/*
 * teardown.c — the ranks a launcher tears down together keep their snapshots.
 *
 * When a job fails, Open MPI's launcher (mpirun, or orted on other nodes) sends its
 * ranks SIGCONT, SIGTERM a second later, and SIGKILL a second after that — or as
 * soon as one of them dies: the first rank to end interrupts the launcher's sleep
 * (SIGCHLD), and it SIGKILLs the others at once. The fastest rank to write its
 * SIGTERM snapshot thus killed its slower siblings in the middle of theirs (under
 * load, 2 of 3 ranks lost their counts), whatever the grace: giving the ranks 10 s
 * only made every failed job 10 to 20 s longer. MPICH's hydra does the same with a
 * SIGINT that reaches every rank.
 *
 * So the ranks of one launcher share a page of /dev/shm (named after the launcher's
 * pid and start time) with a slot each: its pid and its state, running, ending (it
 * writes its final snapshot on a signal that ends it) or done (its final snapshot is
 * written, however it ended). A rank ended by a signal, once its own snapshot is
 * written, waits while a sibling is ending, or still runs with such a signal pending
 * (/proc/<pid>/status: delivered, not yet handled: a loaded node may not have run its
 * handler yet) or, for its first HSR_TEARDOWN_SETTLE_MS, still runs at all (a
 * launcher preempted in its loop of kills may not have signalled it yet), at most
 * HSR_TEARDOWN_WAIT_MS (a sibling that hangs), and then dies of its signal: no rank
 * ends while another one's snapshot is half written, and a rank killed alone waits
 * only the settling time. Without /dev/shm nothing is shared and nothing
 * waits; beyond HSR_TEARDOWN_SLOTS ranks on one launcher, the others are not waited
 * for. The launcher removes its page when it ends; the last rank done removes it too.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/lifecycle.h"

enum { RUNNING = 1, ENDING = 2, DONE = 3 };

struct slot {
    _Atomic int pid;
    _Atomic int state;
};

struct shared {
    _Atomic int running; /* slots not done yet: the last one done removes the page */
    struct slot slot[HSR_TEARDOWN_SLOTS];
};

static struct shared *page;
static struct slot *mine;
static char page_name[96];

/* Field 22 of /proc/<pid>/stat: the process's start time (ticks since boot), or 0. */
static unsigned long long start_time(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    const char *field = hsr_proc_stat_field(path, 22, buf, sizeof buf);
    return field ? strtoull(field, NULL, 10) : 0;
}

static void name_of(int pid, char *out, size_t cap)
{
    snprintf(out, cap, "/dev/shm/heapscope-teardown.%d.%llu", pid, start_time(pid));
}

void hsr_teardown_join(void)
{
    name_of((int)getppid(), page_name, sizeof page_name);
    int fd = open(page_name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)sizeof(struct shared)) == 0)
        p = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return;
    page = p;
    for (int i = 0; i < HSR_TEARDOWN_SLOTS && !mine; i++) {
        int none = 0;
        if (atomic_compare_exchange_strong(&page->slot[i].pid, &none, (int)getpid())) {
            mine = &page->slot[i];
            atomic_store(&mine->state, RUNNING);
            atomic_fetch_add(&page->running, 1);
        }
    }
}

void hsr_teardown_leave(void)
{
    if (!mine || atomic_exchange(&mine->state, DONE) == DONE)
        return;
    if (atomic_fetch_sub(&page->running, 1) == 1)
        unlink(page_name); /* the last one: nobody waits on it any more */
}

void hsr_teardown_begin(void)
{
    int running = RUNNING;
    if (mine)
        atomic_compare_exchange_strong(&mine->state, &running, ENDING);
}

/* From /proc/<pid>/status: 0 the process is gone (or a zombie), 1 it runs, 2 it runs
 * with a signal that ends a process pending (sent, its handler not run yet). */
static int sibling(int pid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *state = strstr(buf, "\nState:");
    for (state = state ? state + 7 : NULL; state && (*state == ' ' || *state == '\t'); state++)
        ;
    if (state && (*state == 'Z' || *state == 'X'))
        return 0; /* ended, not reaped yet */
    sigset_t ends;
    hsr_dump_signal_set(&ends);
    sigdelset(&ends, SIGUSR1);
    static const char *const keys[] = {"\nSigPnd:", "\nShdPnd:"};
    for (size_t k = 0; k < 2; k++) {
        const char *p = strstr(buf, keys[k]);
        unsigned long long mask = p ? strtoull(p + strlen(keys[k]), NULL, 16) : 0;
        for (int sig = 1; sig < 64; sig++)
            if ((mask >> (sig - 1) & 1) && sigismember(&ends, sig) == 1)
                return 2;
    }
    return 1;
}

/* 1 while a sibling writes its final snapshot or has a signal that ends it pending;
 * also, before `settled`, while one still runs (a launcher preempted in the middle of
 * its loop of kills has not signalled it yet). */
static int sibling_busy(int settled)
{
    for (int i = 0; i < HSR_TEARDOWN_SLOTS; i++) {
        struct slot *s = &page->slot[i];
        int pid = atomic_load(&s->pid);
        if (pid == 0)
            return 0; /* (slots are taken in order) */
        int state = atomic_load(&s->state);
        if (s == mine || state == DONE)
            continue;
        int now = sibling(pid);
        if ((state == ENDING && now) || now == 2 || (!settled && now))
            return 1;
    }
    return 0;
}

void hsr_teardown_end(void)
{
    if (!mine)
        return;
    hsr_teardown_leave(); /* (done already when its snapshot was written) */
    for (int ms = 0; ms < HSR_TEARDOWN_WAIT_MS && sibling_busy(ms >= HSR_TEARDOWN_SETTLE_MS);
         ms += 5) {
        struct timespec five = {0, 5000000};
        nanosleep(&five, NULL);
    }
}

void hsr_teardown_after_fork_child(void)
{
    page = NULL; /* the child is no rank of the launcher: the parent's slot stays its own */
    mine = NULL;
}

void hsr_teardown_launcher_ends(void)
{
    char own[96];
    name_of((int)getpid(), own, sizeof own);
    unlink(own); /* (ranks killed by SIGKILL never removed it) */
}
