/*
 * lifecycle.c — when the recorder starts, dumps and stops.
 *
 *   load (constructor)   read HEAPSCOPE_* settings, open the profile file
 *   exit (destructor)    snapshot, reason "exit" (also on _exit, hooks/process.c)
 *   SIGTERM / SIGINT     snapshot, then the default action (the exit status stays
 *                        "killed by signal"); SIGUSR1: snapshot and continue.
 *                        Installed only where the disposition is SIG_DFL; a
 *                        program that installs its own handler takes the signal
 *                        over (hooks/process.c) and its exit() still dumps.
 *   fork (child)         the child's counts start at zero, in its own file
 *   exec*                snapshot, reason "exec", before the new image replaces us
 *   timeline             timeline/timeline.c samples and flushes on its own thread; before
 *                        the last snapshot of a process (exit, _exit, exec, SIGTERM,
 *                        SIGINT) the file is sealed (output/profile_writer.c) so no
 *                        background write is cut in half by the process's end
 *
 * If the output directory is unusable: one warning, recording off, the program
 * runs normally.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "count/counting.h"
#include "count/regions.h"
#include "count/selection.h"
#include "hooks/hooks.h"
#include "output/profile_writer.h"
#include "output/snapshot.h"
#include "stacks/modules.h"
#include "stacks/sampling.h"
#include "stacks/stacks.h"
#include "timeline/timeline.h"
#include "trace/trace.h"
#include "track/track.h"

struct hsr_settings hsr_settings = {".", "", "", 64, 0};
_Atomic int hsr_recording = 1;
uint64_t hsr_start_real_ns, hsr_start_mono_ns;

static int initialized;

uint64_t hsr_now_ns(int clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void hsr_warn(const char *msg)
{
    char line[4400];
    int n = snprintf(line, sizeof line, "heapscope: %s\n", msg);
    if (n > (int)sizeof line - 1)
        n = (int)sizeof line - 1;
    (void)!write(2, line, (size_t)n);
}

/* ---- signals ---- */

static const int dump_signals[] = {SIGTERM, SIGINT, SIGUSR1};
static _Atomic int owned[65];
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

int hsr_signal_owned(int sig) { return sig > 0 && sig < 65 && atomic_load(&owned[sig]); }

void hsr_signal_release(int sig)
{
    if (sig > 0 && sig < 65)
        atomic_store(&owned[sig], 0);
}

static void on_signal(int sig)
{
    int saved_errno = errno;
    unsigned reason = sig == SIGTERM  ? HS_REASON_SIGTERM
                      : sig == SIGINT ? HS_REASON_SIGINT
                                      : HS_REASON_SIGUSR1;
    if (sig != SIGUSR1)
        hsr_profile_seal();
    hsr_snapshot(reason, 1);
    if (sig != SIGUSR1) {
        /* Let the signal do what it would have done without us. */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        hsr_signal_release(sig);
        real_sigaction(sig, &dfl, NULL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
    }
    errno = saved_errno;
}

static void install_signals(void)
{
    real_sigaction = hsr_next("sigaction");
    if (!real_sigaction)
        return;
    for (size_t i = 0; i < sizeof dump_signals / sizeof *dump_signals; i++) {
        int sig = dump_signals[i];
        struct sigaction old, act;
        if (real_sigaction(sig, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL)
            continue;
        memset(&act, 0, sizeof act);
        act.sa_handler = on_signal;
        act.sa_flags = SA_RESTART;
        sigemptyset(&act.sa_mask);
        atomic_store(&owned[sig], 1);
        if (real_sigaction(sig, &act, NULL) != 0)
            atomic_store(&owned[sig], 0);
    }
}

/* ---- fork ---- */

static void fork_prepare(void)
{
    hsr_dump_lock_for_fork();
    hsr_regions_lock();
    hsr_pool_lock();
}

static void fork_parent(void)
{
    hsr_pool_unlock();
    hsr_regions_unlock();
    hsr_dump_unlock_for_fork();
}

static void fork_child(void)
{
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    hsr_pool_unlock();
    hsr_regions_unlock();
    hsr_snapshot_after_fork_child(); /* also frees the dump lock */
    hsr_profile_after_fork_child();  /* and the writer lock */
    hsr_counters_after_fork_child();
    hsr_stacks_after_fork_child();
    hsr_profile_close(); /* the parent's file stays the parent's */
    hsr_start_real_ns = hsr_now_ns(CLOCK_REALTIME);
    hsr_start_mono_ns = hsr_now_ns(CLOCK_MONOTONIC);
    if (atomic_load(&hsr_recording) && hsr_profile_open() != 0)
        atomic_store(&hsr_recording, 0);
    if (atomic_load(&hsr_recording))
        hsr_timeline_after_fork_child();
    hsr_hot_update(); /* recording may have stopped */
    hsr_guard = saved_guard;
}

/* ---- exec ---- */

/* Not in a vfork child: it shares the parent's memory and file, and the parent,
 * which goes on, dumps for itself. */
void hsr_before_exec(void)
{
    if (atomic_load(&hsr_recording) && hsr_profile_pid() == (int)getpid()) {
        hsr_profile_seal(); /* lifted after a few seconds if the exec fails */
        hsr_snapshot(HS_REASON_EXEC, 0);
    }
}

void hsr_before_exit_now(void)
{
    if (hsr_real.free && atomic_load(&hsr_recording) && hsr_profile_is_open() &&
        hsr_profile_pid() == (int)getpid()) {
        hsr_profile_seal();
        hsr_snapshot(HS_REASON_EXIT, 0);
    }
}

/* ---- start and end ---- */

static const char *setting(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    const char *copy = hsr_pool_strdup(v); /* the program may change its environment */
    return copy ? copy : fallback;
}

static void read_settings(void)
{
    hsr_timeline_settings();
    hsr_settings.output_dir = setting("HEAPSCOPE_OUTPUT_DIR", ".");
    hsr_settings.stack_sizes = setting("HEAPSCOPE_STACK_SIZES", "");
    hsr_settings.stack_regions = setting("HEAPSCOPE_STACK_REGIONS", "");
    const char *depth = setting("HEAPSCOPE_STACK_DEPTH", "64");
    char *end;
    long d = strtol(depth, &end, 10);
    if (*end || d < 1 || d > (long)HSR_MAX_DEPTH) {
        char msg[200];
        snprintf(msg, sizeof msg, "HEAPSCOPE_STACK_DEPTH must be 1..%u, using 64", HSR_MAX_DEPTH);
        hsr_warn(msg);
        d = 64;
    }
    hsr_settings.max_depth = (uint32_t)d;
    const char *unwind = setting("HEAPSCOPE_UNWIND", "dwarf");
    if (strcmp(unwind, "fp") == 0) {
        hsr_settings.unwinder = 1;
    } else if (strcmp(unwind, "dwarf") != 0) {
        hsr_warn("HEAPSCOPE_UNWIND must be 'dwarf' or 'fp', using dwarf");
    }
    char err[512];
    const char *sample = setting("HEAPSCOPE_SAMPLE_BYTES", "");
    if (*sample && *hsr_settings.stack_sizes) {
        hsr_warn("HEAPSCOPE_SAMPLE_BYTES with HEAPSCOPE_STACK_SIZES: exact stacks of the chosen "
                 "sizes, no sampling");
    } else if (*sample && (hsr_track_on || hsr_trace_on)) {
        hsr_warn("HEAPSCOPE_SAMPLE_BYTES with tracking or the trace: no sampling (lifetimes "
                 "need every block's stack type)");
    } else if (hsr_sampling_init(sample, getenv("HEAPSCOPE_SAMPLE_SEED"), err, sizeof err)) {
        hsr_warn(err);
    }
    if (hsr_selection_init(hsr_settings.stack_sizes, hsr_settings.stack_regions, err, sizeof err)) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s; recording counts without stacks", err);
        hsr_warn(msg);
        hsr_settings.stack_sizes = "";
        hsr_selection_init("", "", err, sizeof err);
    }
}

__attribute__((constructor)) void hsr_init(void)
{
    if (initialized)
        return;
    initialized = 1;
    hsr_resolve();
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    hsr_start_real_ns = hsr_now_ns(CLOCK_REALTIME);
    hsr_start_mono_ns = hsr_now_ns(CLOCK_MONOTONIC);
    read_settings();
    hsr_regions_reselect();
    hsr_modules_init();
    hsr_stacks_init((int)hsr_settings.unwinder, hsr_settings.max_depth);
    hsr_threads_init();
    hsr_exec_env_init();
    if (hsr_profile_open() != 0) {
        atomic_store(&hsr_recording, 0);
    } else {
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        install_signals();
        hsr_timeline_start();
    }
    hsr_hot_arm();
    hsr_guard = saved_guard;
}

__attribute__((destructor)) static void hsr_fini(void)
{
    if (!atomic_load(&hsr_recording))
        return;
    hsr_profile_seal();
    hsr_snapshot(HS_REASON_EXIT, 0);
    uint64_t unbalanced = hsr_regions_unbalanced();
    if (unbalanced) {
        char msg[120];
        snprintf(msg, sizeof msg, "%llu unbalanced heapscope_region_end() calls were ignored",
                 (unsigned long long)unbalanced);
        hsr_warn(msg);
    }
}
