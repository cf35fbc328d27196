/*
 * teardown.c — the ranks a launcher tears down together keep their snapshots.
 *
 * When a job fails, Open MPI's launcher (mpirun, or orted on other nodes) sends its
 * ranks SIGCONT, SIGTERM a second later, and SIGKILL a second after that — or as
 * soon as one of them dies: the first rank to end interrupts the launcher's sleep
 * (SIGCHLD), and it SIGKILLs the others at once. The fastest rank to write its
 * SIGTERM snapshot thus killed its slower siblings in the middle of theirs (under
 * load, 2 of 3 ranks lost their counts), whatever the grace: giving the ranks 10 s
 * only made every failed job 10 to 20 s longer.
 *
 * MPICH's hydra does the same with a SIGINT that reaches every rank.
 *
 * So the ranks of one launcher share two counters (a page of /dev/shm named after
 * the launcher's pid and start time): `alive`, the ranks whose final snapshot is not
 * written (each adds itself when it starts and takes itself off once its final
 * snapshot is written, however it ends), and `ending`, those writing it on a signal
 * that ends them. A rank killed so, once its own snapshot is written, waits while a
 * sibling is still writing (or may yet begin: HSR_TEARDOWN_SETTLE_MS for the others'
 * signals to arrive), at most HSR_TEARDOWN_WAIT_MS (a sibling SIGKILLed never takes
 * itself off), and then dies of its signal: no rank ends while another one's snapshot
 * is half written, a rank killed alone waits only the settling time. Without
 * /dev/shm nothing is shared and nothing waits. The launcher removes its page when it
 * ends; the last rank to take itself off removes it too.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/lifecycle.h"

struct shared {
    _Atomic int alive;  /* ranks of this launcher whose final snapshot is not written */
    _Atomic int ending; /* ranks writing it on a signal that ends them */
};

static struct shared *page;
static char page_name[96];
static _Atomic int joined; /* 1 once added, 0 again once taken off */
static _Atomic int began;  /* this rank counts in `ending` */

/* Field 22 of /proc/<pid>/stat: the process's start time (ticks since boot), or 0. */
static unsigned long long start_time(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
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
    atomic_fetch_add(&page->alive, 1);
    atomic_store(&joined, 1);
}

void hsr_teardown_leave(void)
{
    int was = 1;
    if (!page || !atomic_compare_exchange_strong(&joined, &was, 0))
        return;
    if (atomic_fetch_sub(&page->alive, 1) == 1)
        unlink(page_name); /* the last one: nobody waits on it any more */
}

void hsr_teardown_begin(void)
{
    if (page && atomic_load(&joined) && !atomic_exchange(&began, 1))
        atomic_fetch_add(&page->ending, 1);
}

void hsr_teardown_end(void)
{
    if (!page || !atomic_exchange(&began, 0))
        return;
    hsr_teardown_leave(); /* (done already when its snapshot was written) */
    atomic_fetch_sub(&page->ending, 1);
    for (int ms = 0; atomic_load(&page->alive) > 0 && ms < HSR_TEARDOWN_WAIT_MS; ms++) {
        if (atomic_load(&page->ending) <= 0 && ms >= HSR_TEARDOWN_SETTLE_MS)
            break; /* nobody else is ending: killed alone */
        struct timespec one = {0, 1000000};
        nanosleep(&one, NULL);
    }
}

void hsr_teardown_after_fork_child(void)
{
    page = NULL; /* the child is no rank of the launcher: the parent's count stays its own */
    atomic_store(&joined, 0);
    atomic_store(&began, 0);
}

void hsr_teardown_launcher_ends(void)
{
    char own[96];
    name_of((int)getpid(), own, sizeof own);
    unlink(own); /* (ranks killed by SIGKILL never removed it) */
}
