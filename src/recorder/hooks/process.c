/*
 * process.c — interposed process-level calls: exec* (dump before the image
 * is replaced) and signal/sigaction (the program's own handlers win).
 *
 * On a signal the recorder owns (the dump signals SIGTERM/SIGINT/SIGUSR1, the
 * crash signals SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGABRT), what the program installs
 * and is told is decided by core/signals.c: a dump signal is handed over, a crash
 * signal's handler is chained behind the recorder's crash snapshot.
 * _exit/_Exit dump too (dash's `exit` and many forked children end that way),
 * unless the caller is not the process the file belongs to (a vfork child).
 * quick_exit dumps after the program's at_quick_exit handlers (the recorder
 * registers its own first, at start: core/lifecycle.c). exit, _exit, _Exit and
 * quick_exit note how the process ends and its status (PROCESS_END, core/ending.c);
 * pthread_exit in main lets the recorder's threads end the process when the
 * program's last thread has ended (core/last_thread.c). A raw exit_group system
 * call passes no hook: the file then has no final snapshot, which `heapscope
 * record` reports (exit status 74).
 * Not interposed: sigset/sysv_signal/bsd_signal (rare; they bypass this).
 * Exec gets our LD_PRELOAD/HEAPSCOPE_* added when the environment lacks them, and
 * the MPI layer of the program it starts (core/exec_env.c), so the child is recorded
 * too, with its MPI calls attributed.
 * posix_spawn needs nothing: the parent keeps running and the child starts fresh
 * (with its explicit environment as given: posix_spawn is not interposed).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
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

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    sigaction_fn real = NEXT(sigaction_fn, "sigaction");
    if (!hsr_signal_owned(sig))
        return real(sig, act, old);
    return hsr_signal_program_action(sig, act, old);
}

/* glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its handler). */
sighandler_t signal(int sig, sighandler_t handler)
{
    signal_fn real = NEXT(signal_fn, "signal");
    if (!hsr_signal_owned(sig))
        return real(sig, handler);
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    if (hsr_signal_program_action(sig, &act, &old) != 0)
        return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)old.sa_sigaction : old.sa_handler;
}

/* ---- exec family ---- */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);

/* The program's envp (environ for the forms without one), plus what the child
 * needs to be recorded, and its MPI layer (core/exec_env.c). */
#define CHILD_ENV(envp, program, out)      \
    char *room_[hsr_exec_env_slots(envp)]; \
    char buf_[hsr_exec_env_bytes(envp)];   \
    char *const *out = hsr_exec_env(envp, program, room_, buf_, sizeof buf_)

extern char **environ;

int execve(const char *path, char *const argv[], char *const envp[])
{
    hsr_before_exec();
    CHILD_ENV(envp, path, env);
    return NEXT(execve_fn, "execve")(path, argv, env);
}

int execv(const char *path, char *const argv[])
{
    hsr_before_exec();
    CHILD_ENV(environ, path, env);
    return NEXT(execve_fn, "execve")(path, argv, env);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    hsr_before_exec();
    char found[4096];
    CHILD_ENV(envp, hsr_exec_resolve(file, found, sizeof found), env);
    return NEXT(execve_fn, "execvpe")(file, argv, env);
}

int execvp(const char *file, char *const argv[]) { return execvpe(file, argv, environ); }

int fexecve(int fd, char *const argv[], char *const envp[])
{
    hsr_before_exec();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    CHILD_ENV(envp, path, env);
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

/* ---- exit, _exit, quick_exit, pthread_exit ---- */

void exit(int status)
{
    hsr_end_exit(HS_END_EXIT, status); /* the snapshot: our destructor, as glibc's exit runs it */
    NEXT(void (*)(int), "exit")(status);
    __builtin_unreachable();
}

void _exit(int status)
{
    hsr_end_exit(HS_END_EXIT_NOW, status);
    hsr_before_exit_now();
    NEXT(void (*)(int), "_exit")(status);
    __builtin_unreachable();
}

void _Exit(int status)
{
    hsr_end_exit(HS_END_EXIT_NOW, status);
    hsr_before_exit_now();
    NEXT(void (*)(int), "_Exit")(status);
    __builtin_unreachable();
}

void quick_exit(int status)
{
    hsr_end_exit(HS_END_QUICK_EXIT, status); /* the snapshot: our at_quick_exit handler */
    NEXT(void (*)(int), "quick_exit")(status);
    __builtin_unreachable();
}

void pthread_exit(void *value)
{
    hsr_main_thread_exits();
    NEXT(void (*)(void *), "pthread_exit")(value);
    __builtin_unreachable();
}
