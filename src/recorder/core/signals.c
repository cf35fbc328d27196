/*
 * signals.c — the recorder's signal handlers, and the program's own handlers
 * (the sigaction/signal hooks of hooks/process.c call in here).
 *
 * Dump signals, SIGTERM / SIGINT / SIGUSR1 and every other signal whose default
 * ends the process (SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR2 ...: `fatal` below;
 * installed where SIG_DFL at start): snapshot, then the default action (the exit
 * status stays "killed by signal"; reason sigterm, sigint, or signal with an ENDING
 * chunk naming it); SIGUSR1: snapshot and continue. A program installing its own
 * handler takes the signal over (the recorder steps aside; its exit() still dumps);
 * one setting SIG_DFL keeps ours; one asking is told SIG_DFL, as it would be
 * without us. (The real-time signals are left alone: libraries pick free ones.)
 *
 * Crash signals, SIGSEGV / SIGBUS / SIGFPE / SIGILL / SIGABRT (installed unless
 * ignored at start; a handler already there is chained): the handler writes a
 * final snapshot (reason "crash", an ENDING chunk with the signal: core/ending.c),
 * then chains to the handler the program installed, if any, else restores the
 * default action and re-raises, so the process dies of the same signal with the
 * same status (and core dump). Ours stays installed: the program's handler is
 * kept here (`chained`) and reported back to it by sigaction; a program handler
 * that returns (it repaired the fault, as a garbage collector does) clears the
 * ending again, and later signals of that kind go straight to it (no snapshot each
 * time; if it then gives up, by SIG_DFL and a re-raise, the crash is written then). The handler runs on an alternate stack reserved at start (for the
 * thread that loaded the recorder; a stack overflow on another thread dies
 * without a snapshot), and writes from mmap'd buffers with write(2), never malloc.
 * A crash inside the crash handler, or a second thread's crash while one is
 * being written, waits for it (up to HSR_CRASH_WAIT_MS) and then dies of the default.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/lifecycle.h"
#include "hooks/hooks.h"
#include "output/profile_writer.h"
#include "output/snapshot.h"

#define NSIG_ 65

static const int dump_signals[] = {SIGTERM, SIGINT,  SIGUSR1, SIGHUP,  SIGQUIT,   SIGPIPE,
                                   SIGALRM, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF,
                                   SIGIO,   SIGPWR,  SIGSYS,  SIGTRAP, SIGSTKFLT};
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static _Atomic int owned[NSIG_];        /* 1: a dump signal of ours, 2: a crash signal of ours */
static struct sigaction chained[NSIG_]; /* crash signals: what the program installed */
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
static _Atomic int crash_writer;     /* thread id writing the crash snapshot */
static _Atomic int recovered[NSIG_]; /* the program's handler of it returned once */

void hsr_dump_signal_set(sigset_t *set)
{
    sigemptyset(set);
    for (size_t i = 0; i < sizeof dump_signals / sizeof *dump_signals; i++)
        sigaddset(set, dump_signals[i]);
}

int hsr_signal_owned(int sig) { return sig > 0 && sig < NSIG_ && atomic_load(&owned[sig]); }

static void default_action(struct sigaction *sa)
{
    memset(sa, 0, sizeof *sa);
    sa->sa_handler = SIG_DFL;
    sigemptyset(&sa->sa_mask);
}

/* The signal's default action, now: re-raised with it unblocked. */
static void die_of(int sig)
{
    struct sigaction dfl;
    default_action(&dfl);
    atomic_store(&owned[sig], 0);
    real_sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

/* ---- dump signals ---- */

static void on_dump_signal(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    int saved_errno = errno;
    unsigned reason = sig == SIGTERM   ? HS_REASON_SIGTERM
                      : sig == SIGINT  ? HS_REASON_SIGINT
                      : sig == SIGUSR1 ? HS_REASON_SIGUSR1
                                       : HS_REASON_SIGNAL;
    if (reason == HS_REASON_SIGNAL && !hsr_ending_is_set())
        hsr_ending_set(HS_REASON_SIGNAL, sig, info ? info->si_code : 0, 0, 0); /* its ENDING */
    if (sig != SIGUSR1) {
        hsr_teardown_begin(); /* (a rank of a job torn down: core/teardown.c) */
        hsr_profile_seal();
        reason = hsr_final_reason(reason); /* an MPI_Abort being killed stays one */
    }
    hsr_snapshot(reason, 1);
    if (sig != SIGUSR1) {
        hsr_teardown_end(); /* the launcher kills the others once one dies (core/teardown.c) */
        die_of(sig);        /* what the signal would have done without us */
    }
    errno = saved_errno;
}

/* ---- crash signals ---- */

static int tid(void) { return (int)syscall(SYS_gettid); }

/* 1 when this thread may write the crash snapshot; 0 when another one did or is:
 * then wait (bounded) for it, so the process does not die under its write. */
static int take_crash(void)
{
    int me = tid(), none = 0;
    if (atomic_compare_exchange_strong(&crash_writer, &none, me))
        return 1;
    if (none == me)
        return 0; /* a crash inside our own crash handler */
    for (int ms = 0; ms < HSR_CRASH_WAIT_MS && atomic_load(&crash_writer) != 0; ms++) {
        struct timespec one = {0, 1000000};
        nanosleep(&one, NULL);
    }
    return 0;
}

static int sent_by_kill(const siginfo_t *info) { return info && info->si_code <= 0; }

static void on_crash(int sig, siginfo_t *info, void *uc)
{
    int saved_errno = errno;
    struct sigaction prog = chained[sig];
    int program_handles =
        (prog.sa_flags & SA_SIGINFO) || (prog.sa_handler != SIG_DFL && prog.sa_handler != SIG_IGN);
    if (!program_handles && prog.sa_handler == SIG_IGN && sent_by_kill(info))
        return; /* an ignored signal sent by kill(): nothing happens */
    /* A program that recovers from the signal (a garbage collector's write barrier,
     * a runtime's null check) may take thousands: one snapshot, not one each. */
    int again = program_handles && atomic_load(&recovered[sig]);
    if (!again && take_crash()) {
        uint64_t addr = (!sent_by_kill(info) && sig != SIGABRT) ? (uint64_t)info->si_addr : 0;
        hsr_ending_set(HS_REASON_CRASH, sig, info ? info->si_code : 0, 0, addr);
        hsr_profile_seal();
        hsr_snapshot(HS_REASON_CRASH, 1);
        atomic_store(&crash_writer, 0);
    }
    if (program_handles) {
        if (prog.sa_flags & SA_RESETHAND)
            default_action(&chained[sig]);
        sigset_t old;
        pthread_sigmask(SIG_BLOCK, &prog.sa_mask, &old);
        if (prog.sa_flags & SA_SIGINFO)
            prog.sa_sigaction(sig, info, uc);
        else
            prog.sa_handler(sig);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        hsr_ending_clear(); /* it returned: the program goes on */
        atomic_store(&recovered[sig], 1);
        errno = saved_errno;
        return;
    }
    die_of(sig);
    errno = saved_errno; /* (a fault re-executes and meets the default action) */
}

/* The alternate stack the crash handler runs on: a stack overflow is a crash too. */
static void reserve_crash_stack(void)
{
    stack_t now;
    if (sigaltstack(NULL, &now) != 0 || !(now.ss_flags & SS_DISABLE))
        return; /* the program has its own */
    void *p = mmap(NULL, HSR_CRASH_STACK_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return;
    stack_t ss = {.ss_sp = p, .ss_size = HSR_CRASH_STACK_BYTES, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0)
        munmap(p, HSR_CRASH_STACK_BYTES);
}

/* ---- installing ---- */

static void install(int sig, int kind)
{
    struct sigaction old, act;
    if (real_sigaction(sig, NULL, &old) != 0)
        return;
    int dfl = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
    int ign = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN;
    /* A dump signal only where nobody else wants it. A crash signal also where a
     * library's constructor that ran before ours (UCX's, under MPICH) installed a
     * handler: ours goes first and chains to it. */
    if (kind == 1 ? !dfl : ign)
        return;
    memset(&act, 0, sizeof act);
    sigemptyset(&act.sa_mask);
    if (kind == 1) {
        act.sa_sigaction = on_dump_signal;
        act.sa_flags = SA_SIGINFO | SA_RESTART;
    } else {
        act.sa_sigaction = on_crash;
        act.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        for (size_t i = 0; i < sizeof dump_signals / sizeof *dump_signals; i++)
            sigaddset(&act.sa_mask, dump_signals[i]); /* no dump on top of the crash's */
        chained[sig] = old;
    }
    atomic_store(&owned[sig], kind);
    if (real_sigaction(sig, &act, NULL) != 0)
        atomic_store(&owned[sig], 0);
}

void hsr_signals_install(void)
{
    real_sigaction = hsr_next("sigaction");
    if (!real_sigaction)
        return;
    for (size_t i = 0; i < sizeof dump_signals / sizeof *dump_signals; i++)
        install(dump_signals[i], 1);
    reserve_crash_stack();
    for (size_t i = 0; i < sizeof crash_signals / sizeof *crash_signals; i++)
        install(crash_signals[i], 2);
}

/* fork child: the crash being written (if any) is the parent's. */
void hsr_signals_after_fork_child(void) { atomic_store(&crash_writer, 0); }

/* ---- the program's sigaction and signal on a signal we own ---- */

int hsr_signal_program_action(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (atomic_load(&owned[sig]) == 2) {
        if (old)
            *old = chained[sig];
        if (act)
            chained[sig] = *act;
        return 0;
    }
    if (act && (act->sa_flags & SA_SIGINFO || act->sa_handler != SIG_DFL)) {
        atomic_store(&owned[sig], 0); /* the program takes the dump signal over */
        int rc = real_sigaction(sig, act, old);
        if (rc == 0 && old)
            default_action(old);
        return rc;
    }
    if (old)
        default_action(old);
    return 0;
}
