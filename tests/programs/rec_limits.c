/* The recorder at its limits (tests/e2e/test_record_limits.py), by argv[1]:
 *   threads   300 short-lived threads, one after the other, each 11011 x5 in
 *             region "churn": exact totals although thread tables are reused
 *   regions   5000 distinct top-level regions r0..r4999, 12012 x1 in each:
 *             the first 4094 get their own id, the rest count as "(overflow)"
 *   deep      regions nested 70 deep (the stack keeps 64), 13013 x1 at the bottom,
 *             then unwound: 13013 x1 at the top level again
 *   types     sizes 100000..249999 once each from one call site: with
 *             --sizes all, more stack types than a thread's table holds
 *   closefds  closes every descriptor above 2 and puts /dev/null on 512..515
 *             (as daemons and MPI launchers do), then 15015 x2: still recorded
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "heapscope.h"

static void *volatile sink;

static void churn(size_t size, int n)
{
    for (int i = 0; i < n; i++) {
        sink = malloc(size);
        free(sink);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    churn(11011, 5);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "threads";
    if (strcmp(mode, "threads") == 0) {
        HEAPSCOPE_REGION_BEGIN("churn");
        for (int i = 0; i < 300; i++) {
            pthread_t t;
            pthread_create(&t, NULL, worker, NULL);
            pthread_join(t, NULL);
        }
        HEAPSCOPE_REGION_END();
    } else if (strcmp(mode, "regions") == 0) {
        char name[32];
        for (int i = 0; i < 5000; i++) {
            snprintf(name, sizeof name, "r%d", i);
            HEAPSCOPE_REGION_BEGIN(name);
            churn(12012, 1);
            HEAPSCOPE_REGION_END();
        }
    } else if (strcmp(mode, "deep") == 0) {
        char name[32];
        for (int i = 0; i < 70; i++) {
            snprintf(name, sizeof name, "d%d", i);
            HEAPSCOPE_REGION_BEGIN(name);
        }
        churn(13013, 1);
        for (int i = 0; i < 70; i++)
            HEAPSCOPE_REGION_END();
        churn(13013, 1);
    } else if (strcmp(mode, "types") == 0) {
        for (size_t size = 100000; size < 250000; size++)
            churn(size, 1);
    } else if (strcmp(mode, "closefds") == 0) {
        for (int fd = 3; fd < 4096; fd++)
            close(fd);
        int null = open("/dev/null", O_WRONLY);
        for (int fd = 512; fd < 516; fd++)
            dup2(null, fd);
        churn(15015, 2);
    }
    printf("%s done\n", mode);
    return 0;
}
