/* The program's descriptor numbers stay its own while the recorder's threads read /proc
 * (tests/e2e/test_timeline_fds.py). An MPI launcher's proxy, in a fork child before exec,
 * does close(0) then dup2(pipe, 0): in between, descriptor 0 is free, and an open() by a
 * thread of the recorder takes it (the dup2 then fails with EBUSY, or closes our file).
 *
 * The parent closes 0 and, for argv[1] ms, looks at it again and again: it must stay
 * free. Then it forks; the child (whose sampler starts at once) does the same, then
 * dup2s a pipe onto 0 and checks it is the pipe. Prints "<who> taken <n> dup2 <ok>";
 * exits 0 when nothing took 0 and every dup2 worked. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Times descriptor 0 was found open in `ms` ms of looking, then dup2(pipe, 0). */
static int watch_zero(const char *who, long ms)
{
    long taken = 0, end = now_ms() + ms;
    for (int spin = 0; now_ms() < end; spin++) {
        if (fcntl(0, F_GETFD) != -1)
            taken++;
        if (spin % 64 == 0)
            free(malloc(64 + (size_t)spin % 512)); /* the program allocates meanwhile */
    }
    int p[2];
    struct stat st, pst;
    int ok = pipe(p) == 0 && dup2(p[0], 0) == 0 && fstat(0, &st) == 0 &&
             fstat(p[0], &pst) == 0 && st.st_ino == pst.st_ino;
    printf("%s taken %ld dup2 %s\n", who, taken, ok ? "ok" : "failed");
    fflush(stdout);
    return taken == 0 && ok;
}

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : 300;
    close(0);
    int good = watch_zero("parent", ms);
    close(0);
    pid_t pid = fork();
    if (pid == 0)
        _exit(watch_zero("child", ms) ? 0 : 1);
    int status;
    waitpid(pid, &status, 0);
    return good && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
