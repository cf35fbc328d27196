/* The program's descriptor numbers stay its own while the recorder's threads read /proc
 * (tests/e2e/test_timeline_fds.py). An MPI launcher's proxy, in a fork child before exec,
 * does close(0) then dup2(pipe, 0): in between, descriptor 0 is free, and an open() by a
 * thread of the recorder takes it (the dup2 then fails with EBUSY, or closes our file).
 *
 * The parent closes 0 and, for argv[1] ms, looks at it again and again: it must stay
 * free. Then it forks; the child (whose sampler starts at once) does the same, then
 * dup2s a pipe onto 0 and checks it is the pipe. With argv[2] "closeall" the child first
 * closes every descriptor from 3 up, every millisecond (the recorder's files too, as a
 * daemon or a launcher before exec does): the recorder must not open them again from
 * its own threads meanwhile; inotify on the profile's directory, argv[3], says whether
 * it did ("profile opened <n>"); argv[4] "busy": the child allocates at every look, not
 * every 64th, and 2,000,000 times at least, however long that takes (a trace's buffers
 * all fill while the file is closed, on a loaded machine too), and its own thread may
 * open the profile. Prints "<who> taken <n> dup2 <ok>"; exits 0 when nothing took 0 and
 * every dup2 worked. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
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

#define WATCH_FD 1000 /* the inotify descriptor, kept out of the closing */

static void close_from_3(void)
{
    for (int fd = 3; fd < WATCH_FD; fd++)
        close(fd);
}

/* Files opened in `dir` since the watch began (inotify IN_OPEN) whose names end ".hsp". */
static int profile_opens(void)
{
    char buf[4096] __attribute__((aligned(8)));
    int opens = 0;
    ssize_t n;
    while ((n = read(WATCH_FD, buf, sizeof buf)) > 0)
        for (char *p = buf; p < buf + n;) {
            struct inotify_event *e = (struct inotify_event *)p;
            size_t len = e->len ? strlen(e->name) : 0;
            if (len > 4 && strcmp(e->name + len - 4, ".hsp") == 0)
                opens++;
            p += sizeof *e + e->len;
        }
    return opens;
}

/* Times descriptor 0 was found open in `ms` ms of looking, then dup2(pipe, 0).
 * close_all: every descriptor from 3 up closed again every millisecond. */
static int every = 64;         /* looks between two allocations */
static long min_allocs;        /* busy: allocations made before the time may end it */

static int watch_zero(const char *who, long ms, int close_all)
{
    long taken = 0, end = now_ms() + ms, last_close = 0;
    for (long spin = 0; now_ms() < end || spin < min_allocs * every; spin++) {
        if (fcntl(0, F_GETFD) != -1)
            taken++;
        if (spin % every == 0)
            free(malloc(64 + (size_t)spin % 512)); /* the program allocates meanwhile */
        if (close_all && now_ms() != last_close) {
            close_from_3();
            last_close = now_ms();
        }
    }
    int p[2];
    struct stat st, pst;
    int ok = pipe(p) == 0 && dup2(p[0], 0) == 0 && fstat(0, &st) == 0 &&
             fstat(p[0], &pst) == 0 && st.st_ino == pst.st_ino;
    int reopened = close_all ? profile_opens() : 0;
    printf("%s taken %ld dup2 %s", who, taken, ok ? "ok" : "failed");
    if (close_all)
        printf(" profile opened %d", reopened);
    printf("\n");
    fflush(stdout);
    return taken == 0 && ok && (reopened == 0 || every == 1); /* busy: the program's own writes */
}

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : 300;
    int close_all = argc > 2 && strcmp(argv[2], "closeall") == 0;
    close(0);
    int good = watch_zero("parent", ms, 0);
    close(0);
    pid_t pid = fork();
    if (pid == 0) {
        if (close_all) { /* watch the profile's directory, argv[3], for opens */
            int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
            if (in < 0 || dup2(in, WATCH_FD) != WATCH_FD ||
                inotify_add_watch(WATCH_FD, argv[3], IN_OPEN) < 0)
                return 2;
            close(in);
            if (argc > 4 && strcmp(argv[4], "busy") == 0) {
                every = 1;
                min_allocs = 2000000;
            }
        }
        exit(watch_zero("child", ms, close_all) ? 0 : 1); /* exit: its final snapshot */
    }
    int status;
    waitpid(pid, &status, 0);
    return good && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
