/*
 * hs-measure OUTFILE CMD [ARGS...] — run CMD and write its resource usage to OUTFILE.
 *
 * `heapscope bench` measures through this small launcher rather than forking the
 * command from Python: Linux keeps a process's peak RSS across execve, so a command
 * forked straight from the Python process would report Python's resident size
 * (tens of MiB) as its own maximum RSS, and count the copy-on-write faults of the
 * fork as its own. Forked from this launcher, the command starts from ~1 MiB.
 *
 * OUTFILE gets one line:
 *   status=<wait status> utime_us=<n> stime_us=<n> maxrss_kib=<n> minflt=<n> majflt=<n>
 * from wait4(2), which covers the command and the descendants it waited for.
 * The launcher exits 0 when it wrote OUTFILE, 125 when it could not (it then says
 * why on stderr); if CMD cannot be executed, the child exits 127, as in a shell.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: hs-measure OUTFILE CMD [ARGS...]\n");
        return 125;
    }
    FILE *out = fopen(argv[1], "w");
    if (!out) {
        fprintf(stderr, "hs-measure: cannot write %s: %s\n", argv[1], strerror(errno));
        return 125;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "hs-measure: fork failed: %s\n", strerror(errno));
        return 125;
    }
    if (pid == 0) {
        fclose(out);
        execvp(argv[2], argv + 2);
        fprintf(stderr, "hs-measure: cannot run %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "hs-measure: wait4 failed: %s\n", strerror(errno));
            return 125;
        }
    }
    fprintf(out, "status=%d utime_us=%lld stime_us=%lld maxrss_kib=%ld minflt=%ld majflt=%ld\n",
            status, (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
            (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec,
            ru.ru_maxrss, ru.ru_minflt, ru.ru_majflt);
    if (fclose(out) != 0) {
        fprintf(stderr, "hs-measure: cannot write %s: %s\n", argv[1], strerror(errno));
        return 125;
    }
    return 0;
}
