/*
 * lifecycle.c — when the recorder starts, dumps and stops.
 *
 *   load (constructor)   read HEAPSCOPE_* settings, open the profile file
 *   exit (destructor)    snapshot, reason "exit" (also on _exit, _Exit and, after the
 *                        program's at_quick_exit handlers, quick_exit: hooks/process.c)
 *   last thread          main called pthread_exit and the program's last thread ended:
 *                        the recorder's own threads end the process, exit(0), as glibc
 *                        would have in that thread (core/last_thread.c)
 *   periodic             HEAPSCOPE_SNAPSHOT_MS: a snapshot every so often (the sampler
 *                        thread), which bounds what an end without a hook loses (a raw
 *                        exit_group system call, SIGKILL)
 *   SIGTERM / SIGINT     snapshot, then the default action (the exit status stays
 *                        "killed by signal"); SIGUSR1: snapshot and continue;
 *                        SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGABRT: a "crash" snapshot,
 *                        then the program's handler or the default (core/signals.c)
 *   MPI_Abort            a "mpi-abort" snapshot with its code (core/ending.c)
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
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "access/access.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "core/proc_files.h"
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
extern char **environ;

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
    hsr_ending_clear(); /* the parent's crash or abort is not the child's */
    hsr_end_start();
    hsr_helpers_after_fork_child();
    hsr_teardown_after_fork_child();
    hsr_signals_after_fork_child();
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

/* quick_exit: our at_quick_exit handler, registered first so that it runs last. */
static void at_quick_exit_dump(void) { hsr_before_exit_now(); }

void hsr_before_exit_now(void)
{
    if (hsr_real.free && atomic_load(&hsr_recording) && hsr_profile_is_open() &&
        hsr_profile_pid() == (int)getpid()) {
        hsr_profile_seal();
        hsr_snapshot(hsr_final_reason(HS_REASON_EXIT), 0);
    }
}

/* ---- start and end ---- */

/* A peer allocator placed before libheapscope.so in LD_PRELOAD (or a malloc of the
 * program's own) wins the symbol lookup: our hooks would never be called and the
 * profile would be empty without a word. Say so once. */
static void check_malloc_is_ours(void)
{
    Dl_info self, found;
    void *f = dlsym(RTLD_DEFAULT, "malloc");
    if (!f || !dladdr((void *)check_malloc_is_ours, &self) || !dladdr(f, &found) ||
        !self.dli_fname || !found.dli_fname || strcmp(self.dli_fname, found.dli_fname) == 0)
        return;
    char msg[4400];
    snprintf(msg, sizeof msg,
             "malloc is %s's, which comes before libheapscope.so: its allocations are not "
             "recorded (put libheapscope.so first in LD_PRELOAD; heapscope record does)",
             *found.dli_fname ? found.dli_fname : "the program");
    hsr_warn(msg);
}

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
    } else if (*sample && hsr_trace_on) {
        hsr_warn("HEAPSCOPE_SAMPLE_BYTES with the trace: no sampling (the trace names every "
                 "block's stack type)");
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

/* Libraries' constructors run before ours when the program links them (libstdc++'s
 * emergency exception pool, 72,704 bytes, is allocated in its constructor): reading
 * the settings and readying stack capture at the first allocation gives those blocks
 * their stacks and samples too. The loader has mapped every object by then, the
 * environment is set, and libunwind, which we link, is initialised before any object
 * that may allocate in a constructor (it depends on nothing of theirs). */
void hsr_settings_init(void)
{
    static int done;
    hsr_proc_files_open(); /* first: its fork handler runs before any other of ours */
    if (done || !environ)  /* no environment yet: our constructor reads it */
        return;
    done = 1;
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    read_settings();
    hsr_access_init(); /* record --access: after the stacks' sampling it relies on */
    hsr_regions_reselect();
    hsr_modules_init();
    hsr_stacks_init((int)hsr_settings.unwinder, hsr_settings.max_depth);
    hsr_guard = saved_guard;
}

__attribute__((constructor)) void hsr_init(void)
{
    if (initialized)
        return;
    initialized = 1;
    hsr_resolve();
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    hsr_proc_files_open(); /* (idempotent) before any thread of ours starts */
    hsr_start_real_ns = hsr_now_ns(CLOCK_REALTIME);
    hsr_start_mono_ns = hsr_now_ns(CLOCK_MONOTONIC);
    hsr_timeline_settings(); /* here, not at the first allocation: the heap in use and
                              * the timeline start with the recorder's own start */
    hsr_settings_init();
    hsr_end_start();
    hsr_threads_init();
    hsr_exec_env_init();
    if (hsr_profile_open() != 0) {
        atomic_store(&hsr_recording, 0);
    } else {
        check_malloc_is_ours();
        if (hsr_profile_rank() >= 0)
            hsr_teardown_join();
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        at_quick_exit(at_quick_exit_dump);
        hsr_signals_install();
        hsr_timeline_start();
        hsr_access_start(); /* record --access's watcher thread */
    }
    hsr_hot_arm();
    hsr_guard = saved_guard;
}

__attribute__((destructor)) static void hsr_fini(void)
{
    if (!atomic_load(&hsr_recording))
        return;
    hsr_teardown_launcher_ends();
    hsr_profile_seal();
    hsr_snapshot(hsr_final_reason(HS_REASON_EXIT), 0);
    hsr_stacks_report();
    uint64_t unbalanced = hsr_regions_unbalanced();
    if (unbalanced) {
        char msg[120];
        snprintf(msg, sizeof msg, "%llu unbalanced heapscope_region_end() calls were ignored",
                 (unsigned long long)unbalanced);
        hsr_warn(msg);
    }
}
