/* A forked child's timeline is its own (tests/e2e/test_timeline_record.py): the parent
 * enters "parent" and forks; the child enters "child" (so "parent/child"), holds
 * 2 MiB (touched) for argv[1] ms and returns; the parent waits, then leaves "parent". */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heapscope.h"

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : 300;
    HEAPSCOPE_REGION_BEGIN("parent");
    pid_t pid = fork();
    if (pid == 0) {
        HEAPSCOPE_REGION_BEGIN("child");
        memset(malloc(2 << 20), 1, 2 << 20);
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        HEAPSCOPE_REGION_END();
        return 0;
    }
    int status;
    waitpid(pid, &status, 0);
    HEAPSCOPE_REGION_END();
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
