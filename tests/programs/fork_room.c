/* A fork must leave the parent's profile as it is (tests/e2e/test_record_process.py):
 * the recorder reserves room ahead of its file's end (fallocate, KEEP_SIZE), and a child
 * that gave that room back (ftruncate to the eof it inherited) cut the parent's file,
 * or, forked after such a cut, grew it back with zeros. Prints the parent's profile's
 * size and blocks before and after a fork whose child exits at once. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int profile_fd(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char link[64], target[4096];
    int found = -1;
    while (d && (e = readdir(d))) {
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n > 4 && (target[n] = 0, strcmp(target + n - 4, ".hsp") == 0))
            found = atoi(e->d_name);
    }
    if (d)
        closedir(d);
    return found;
}

int main(void)
{
    for (int i = 0; i < 1000; i++)
        free(malloc(9101));
    int fd = profile_fd();
    if (fd < 0) {
        fprintf(stderr, "no profile open\n");
        return 1;
    }
    struct stat before, after;
    fstat(fd, &before);
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    fstat(fd, &after);
    printf("%lld %lld %lld %lld\n", (long long)before.st_size, (long long)before.st_blocks,
           (long long)after.st_size, (long long)after.st_blocks);
    return 0;
}
