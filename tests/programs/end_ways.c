/* Ways a process ends (tests/e2e/test_process_endings.py), by argv[1]. Every mode first
 * allocates 3 blocks of 30030 bytes, then:
 *   pthread-exit   a worker is started; main calls pthread_exit; the worker, once main
 *                  has gone, allocates 4 blocks of 30031 and returns: the last thread
 *                  ends, the process exits 0 (glibc's exit(0) in that thread)
 *   pthread-wait   the same, but the worker, after its 4 blocks, prints "ready" and
 *                  sleeps (the test sends a signal)
 *   quick-exit     an at_quick_exit handler allocates 5 blocks of 30032; quick_exit(4)
 *   Exit           _Exit(5)
 *   exit           exit(6)
 *   raw            a raw exit_group system call (status 0): no hook sees it
 *   raw-late       4 blocks of 30031, sleeps 600 ms, then the raw exit_group
 *   sigpipe        writes to a pipe whose reader is closed: dies of SIGPIPE
 *   fork-kill      forks a child that allocates 2 blocks of 30033 and waits; the parent
 *                  SIGKILLs it after 300 ms, reaps it and exits 0
 *   umask-fork     umask(0777), then forks a child that allocates 2 blocks of 30033 and
 *                  exits, and exec's argv[2] (a program) in a second child; exits 0
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;

static void keep(size_t size, int n)
{
    for (int i = 0; i < n; i++)
        sink = malloc(size);
}

static int wait_after;

static void *worker(void *arg)
{
    (void)arg;
    /* main has called pthread_exit: its thread is a zombie (its /proc state Z) */
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)getpid(), (int)getpid());
    for (int tries = 0; tries < 5000; tries++) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        char *close = strrchr(buf, ')');
        if (close && (close[2] == 'Z' || close[2] == 'X'))
            break;
        usleep(1000);
    }
    keep(30031, 4);
    if (wait_after) {
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    return NULL;
}

static void at_quick(void) { keep(30032, 5); }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    keep(30030, 3);
    if (strcmp(mode, "pthread-exit") == 0 || strcmp(mode, "pthread-wait") == 0) {
        wait_after = mode[8] == 'w';
        pthread_t t;
        pthread_create(&t, NULL, worker, NULL);
        pthread_exit(NULL);
    }
    if (strcmp(mode, "quick-exit") == 0) {
        at_quick_exit(at_quick);
        quick_exit(4);
    }
    if (strcmp(mode, "Exit") == 0)
        _Exit(5);
    if (strcmp(mode, "exit") == 0)
        exit(6);
    if (strcmp(mode, "raw") == 0)
        syscall(SYS_exit_group, 0);
    if (strcmp(mode, "raw-late") == 0) {
        keep(30031, 4);
        usleep(600000);
        syscall(SYS_exit_group, 0);
    }
    if (strcmp(mode, "sigpipe") == 0) {
        int fds[2];
        if (pipe(fds) != 0)
            return 2;
        close(fds[0]);
        (void)!write(fds[1], "x", 1);
        return 3; /* not reached: SIGPIPE */
    }
    if (strcmp(mode, "fork-kill") == 0) {
        pid_t child = fork();
        if (child == 0) {
            keep(30033, 2);
            for (;;)
                pause();
        }
        usleep(300000);
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        return 0;
    }
    if (strcmp(mode, "umask-fork") == 0 && argc > 2) {
        umask(0777);
        pid_t a = fork();
        if (a == 0) {
            keep(30033, 2);
            exit(0);
        }
        pid_t b = fork();
        if (b == 0) {
            execl(argv[2], argv[2], (char *)NULL);
            _exit(127);
        }
        waitpid(a, NULL, 0);
        waitpid(b, NULL, 0);
        return 0;
    }
    return 1;
}
