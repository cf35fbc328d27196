/* fork + exec (tests/e2e/test_record_process.py):
 *   parent          9009 x2, waits for the child
 *   child           9119 x3, then execs this program with "exec" -> its own file,
 *                   snapshot reason "exec"
 *   exec'd image    9229 x4, a new file (same pid: name with a .1 suffix)
 * With argv[1] = "clean-env" the child execs with an empty environment (execve):
 * the recorder puts back what the new image needs to be recorded.
 * With "vfork" the child is a vfork child that execs at once: it writes no file
 * and no snapshot of its own (it shares the parent's memory until the exec).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;

static void churn(size_t size, int n)
{
    for (int i = 0; i < n; i++) {
        sink = malloc(size);
        free(sink);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exec") == 0) {
        churn(9229, 4);
        return 0;
    }
    int clean_env = argc > 1 && strcmp(argv[1], "clean-env") == 0;
    churn(9009, 2);
    if (argc > 1 && strcmp(argv[1], "vfork") == 0) {
        char *args[] = {argv[0], "exec", NULL};
        pid_t child = vfork();
        if (child == 0) {
            execv("/proc/self/exe", args);
            _exit(127);
        }
        int status = 0;
        waitpid(child, &status, 0);
        printf("child %d exited %d\n", (int)child, WEXITSTATUS(status));
        return WEXITSTATUS(status);
    }
    pid_t pid = fork();
    if (pid == 0) {
        churn(9119, 3);
        if (clean_env) {
            char *args[] = {argv[0], "exec", NULL}, *no_env[] = {NULL};
            execve("/proc/self/exe", args, no_env);
        } else {
            execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
        }
        perror("execl");
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child %d exited %d\n", (int)pid, WEXITSTATUS(status));
    return WEXITSTATUS(status);
}
