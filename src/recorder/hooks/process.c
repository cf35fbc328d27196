/*
 * process.c — interposed process-level calls: exec* (dump before the image
 * is replaced) and signal/sigaction (the program's own handlers win).
 *
 * While the recorder owns SIGTERM/SIGINT/SIGUSR1 (they were SIG_DFL at start):
 *   - a program installing its own handler gets it, and the recorder steps aside
 *     (its exit() path still dumps);
 *   - a program setting SIG_DFL keeps ours, which dumps and then does the default;
 *   - a program asking for the current disposition is told SIG_DFL, as it would
 *     be without the recorder.
 * _exit/_Exit dump too (dash's `exit` and many forked children end that way),
 * unless the caller is not the process the file belongs to (a vfork child).
 * Not interposed: sigset/sysv_signal/bsd_signal (rare; they bypass this).
 * Exec with an explicit environment gets our LD_PRELOAD/HEAPSCOPE_* added when
 * it lacks them (core/exec_env.c), so the child is recorded too.
 * posix_spawn needs nothing: the parent keeps running and the child starts fresh
 * (with its explicit environment as given: posix_spawn is not interposed).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "core/lifecycle.h"
#include "hooks/hooks.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);

static void *next_fn(void *_Atomic *slot, const char *name)
{
    void *f = atomic_load(slot);
    if (!f) {
        f = hsr_next(name);
        atomic_store(slot, f);
    }
    return f;
}

#define NEXT(type, name)              \
    ({                                \
        static void *_Atomic slot_;   \
        (type) next_fn(&slot_, name); \
    })

static void default_disposition(struct sigaction *old)
{
    memset(old, 0, sizeof *old);
    old->sa_handler = SIG_DFL;
    sigemptyset(&old->sa_mask);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    sigaction_fn real = NEXT(sigaction_fn, "sigaction");
    if (!hsr_signal_owned(sig))
        return real(sig, act, old);
    if (act && (act->sa_flags & SA_SIGINFO || act->sa_handler != SIG_DFL)) {
        hsr_signal_release(sig);
        int rc = real(sig, act, old);
        if (rc == 0 && old)
            default_disposition(old);
        return rc;
    }
    if (old)
        default_disposition(old);
    return 0;
}

sighandler_t signal(int sig, sighandler_t handler)
{
    signal_fn real = NEXT(signal_fn, "signal");
    if (!hsr_signal_owned(sig))
        return real(sig, handler);
    if (handler == SIG_DFL)
        return SIG_DFL;
    hsr_signal_release(sig);
    sighandler_t prev = real(sig, handler);
    return prev == SIG_ERR ? SIG_ERR : SIG_DFL;
}

/* ---- exec family ---- */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);

/* The program's envp, plus what the child needs to be recorded (core/exec_env.c). */
#define CHILD_ENV(envp, out)               \
    char *room_[hsr_exec_env_slots(envp)]; \
    char buf_[hsr_exec_env_bytes(envp)];   \
    char *const *out = hsr_exec_env(envp, room_, buf_, sizeof buf_)

int execve(const char *path, char *const argv[], char *const envp[])
{
    hsr_before_exec();
    CHILD_ENV(envp, env);
    return NEXT(execve_fn, "execve")(path, argv, env);
}

int execv(const char *path, char *const argv[])
{
    hsr_before_exec();
    return NEXT(execv_fn, "execv")(path, argv);
}

int execvp(const char *file, char *const argv[])
{
    hsr_before_exec();
    return NEXT(execv_fn, "execvp")(file, argv);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    hsr_before_exec();
    CHILD_ENV(envp, env);
    return NEXT(execve_fn, "execvpe")(file, argv, env);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
    hsr_before_exec();
    CHILD_ENV(envp, env);
    return NEXT(int (*)(int, char *const[], char *const[]), "fexecve")(fd, argv, env);
}

/* execl, execlp, execle (glibc declares arg non-NULL): collect the variadic
 * arguments into an array on the stack (never malloc) and go through the vector
 * forms above. */
#define COLLECT_ARGS(first, argv, ap)   \
    size_t n_ = 1;                      \
    va_start(ap, first);                \
    while (va_arg(ap, const char *))    \
        n_++;                           \
    va_end(ap);                         \
    char *argv[n_ + 1];                 \
    argv[0] = (char *)first;            \
    va_start(ap, first);                \
    for (size_t i_ = 1; i_ <= n_; i_++) \
        argv[i_] = va_arg(ap, char *);

int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, argv, ap)
    va_end(ap);
    return execv(path, argv);
}

int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, argv, ap)
    va_end(ap);
    return execvp(file, argv);
}

int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, argv, ap)
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}

/* ---- _exit ---- */

void _exit(int status)
{
    hsr_before_exit_now();
    NEXT(void (*)(int), "_exit")(status);
    __builtin_unreachable();
}

void _Exit(int status)
{
    hsr_before_exit_now();
    NEXT(void (*)(int), "_Exit")(status);
    __builtin_unreachable();
}
