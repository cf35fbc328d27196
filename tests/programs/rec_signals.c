/* Signals (tests/e2e/test_record_process.py), by argv[1]:
 *   term     10010 x3, then SIGTERM to itself: killed, profile reason "sigterm"
 *   int      the same with SIGINT: reason "sigint"
 *   usr1     10010 x3, SIGUSR1 (snapshot, continues), 10010 x1, then SIGKILL:
 *            no exit dump, so the SIGUSR1 snapshot is the last (3 counted)
 *   dump     10010 x5, heapscope_dump(), 10010 x1, SIGKILL: the "api" snapshot has 5
 *   _exit    10010 x6, then _exit(3): dumped all the same (reason "exit")
 *   dump-exit 10010 x5, heapscope_dump(), 10010 x1, normal exit: two snapshots
 *   handler  installs its own SIGTERM handler, 10010 x2, SIGTERM: the handler runs,
 *            the program exits normally (exit status 7) and the exit dump has 2
 *   wait     10010 x1, prints "ready", waits for a signal (sent by the test)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapscope.h"

static void *volatile sink;
static volatile sig_atomic_t handled;

static void churn(size_t size, int n)
{
    for (int i = 0; i < n; i++) {
        sink = malloc(size);
        free(sink);
    }
}

static void on_term(int sig)
{
    (void)sig;
    handled = 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "term";
    if (strcmp(mode, "term") == 0 || strcmp(mode, "int") == 0) {
        churn(10010, 3);
        raise(mode[0] == 't' ? SIGTERM : SIGINT);
        return 0;  /* not reached */
    }
    if (strcmp(mode, "usr1") == 0) {
        churn(10010, 3);
        raise(SIGUSR1);
        churn(10010, 1);
        raise(SIGKILL);
    }
    if (strcmp(mode, "handler") == 0) {
        signal(SIGTERM, on_term);
        churn(10010, 2);
        raise(SIGTERM);
        printf("handled=%d\n", (int)handled);
        return handled ? 7 : 1;
    }
    if (strcmp(mode, "dump") == 0) {
        churn(10010, 5);
        HEAPSCOPE_DUMP();
        churn(10010, 1);
        raise(SIGKILL);
    }
    if (strcmp(mode, "dump-exit") == 0) {
        churn(10010, 5);
        HEAPSCOPE_DUMP();
        churn(10010, 1);
        return 0;
    }
    if (strcmp(mode, "_exit") == 0) {
        churn(10010, 6);
        _exit(3);
    }
    churn(10010, 1);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
