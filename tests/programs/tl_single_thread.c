/* The recorder's sampler thread leaves a single-threaded program single-threaded in
 * glibc's eyes (tests/e2e/test_timeline_single_thread.py).
 *
 * Prints glibc's flag (__libc_single_threaded) as "main <0|1>" at main, "child <0|1>"
 * in a forked child (whose recorder starts a sampler of its own), and "thread <0|1>"
 * once the program has started a thread of its own; between them, argv[1] rounds of
 * 1000 blocks of 16..96 bytes allocated, then freed (beyond glibc's per-thread cache:
 * its arenas' locked path when the flag is clear), each block checked, with region
 * boundaries (timeline samples) every round.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heapscope.h"

static void churn(long rounds)
{
    static unsigned char *rows[1000];
    for (long r = 0; r < rounds; r++) {
        HEAPSCOPE_REGION_BEGIN("rows");
        for (int i = 0; i < 1000; i++) {
            size_t n = 16 + (size_t)((i * 7 + r) % 81);
            rows[i] = malloc(n);
            memset(rows[i], i & 0xff, n);
        }
        for (int i = 0; i < 1000; i++) {
            size_t n = 16 + (size_t)((i * 7 + r) % 81);
            if (rows[i][0] != (i & 0xff) || rows[i][n - 1] != (i & 0xff)) {
                fprintf(stderr, "block contents corrupted\n");
                exit(1);
            }
            free(rows[i]);
        }
        HEAPSCOPE_REGION_END();
    }
}

static void *idle(void *arg) { return arg; }

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 100;
    printf("main %d\n", __libc_single_threaded != 0);
    fflush(stdout);
    churn(rounds);
    pid_t pid = fork();
    if (pid == 0) {
        printf("child %d\n", __libc_single_threaded != 0);
        fflush(stdout);
        churn(rounds);
        exit(0);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        return 1;
    pthread_t t;
    if (pthread_create(&t, NULL, idle, NULL) != 0 || pthread_join(t, NULL) != 0)
        return 1;
    printf("thread %d\n", __libc_single_threaded != 0);
    churn(rounds);
    return 0;
}
