/*
 * lifecycle.h — when the recorder starts, dumps and stops (lifecycle.c): its
 * settings, the recording switch, the dump signals; and the environment an
 * exec'd child needs to be recorded (exec_env.c).
 */
#ifndef HSR_LIFECYCLE_H
#define HSR_LIFECYCLE_H

#include <signal.h>

#include "common.h"

struct hsr_settings {
    const char *output_dir;
    const char *stack_sizes;   /* as given, "" if none */
    const char *stack_regions; /* as given, "" = all */
    uint32_t max_depth;
    uint32_t unwinder; /* 0 dwarf, 1 frame pointers */
};
extern HSR_HIDDEN struct hsr_settings hsr_settings;
extern HSR_HIDDEN _Atomic int hsr_recording; /* 0: hooks only forward */
extern HSR_HIDDEN uint64_t hsr_start_real_ns, hsr_start_mono_ns;
HSR_HIDDEN void hsr_init(void); /* idempotent */
/* The settings and stack capture, idempotent: from the first allocation on (hooks/malloc.c,
 * when it first resolves the allocator), at the latest from hsr_init. */
HSR_HIDDEN void hsr_settings_init(void);
HSR_HIDDEN void hsr_warn(const char *msg); /* "heapscope: <msg>\n" on stderr */
HSR_HIDDEN void hsr_before_exec(void);
HSR_HIDDEN void hsr_before_exit_now(void); /* _exit: dump if this process owns the file */

/* signals.c: the dump and crash signal handlers */
struct sigaction;
HSR_HIDDEN void hsr_signals_install(void);
HSR_HIDDEN void hsr_signals_after_fork_child(void);
HSR_HIDDEN int hsr_signal_owned(int sig);           /* our handler is installed */
HSR_HIDDEN void hsr_dump_signal_set(sigset_t *set); /* the signals that dump (and end) */
/* The program's sigaction on a signal we own (hooks/process.c): 0 or -1, as sigaction. */
HSR_HIDDEN int hsr_signal_program_action(int sig, const struct sigaction *act,
                                         struct sigaction *old);

/* ending.c: a crash or MPI_Abort, recorded in the final snapshots */
struct hsr_buf;
HSR_HIDDEN void hsr_ending_set(unsigned kind, int sig, int si_code, int error_code,
                               uint64_t address);
HSR_HIDDEN void hsr_ending_clear(void);
HSR_HIDDEN int hsr_ending_is_set(void);
HSR_HIDDEN unsigned hsr_final_reason(unsigned reason); /* the ending's, if one is set */
HSR_HIDDEN void hsr_ending_write(struct hsr_buf *b, unsigned reason); /* snapshot.c */
/* how the process ends: PROCESS_END in its final snapshots */
HSR_HIDDEN void hsr_end_start(void);                    /* at start, and in a fork child */
HSR_HIDDEN void hsr_end_exit(unsigned how, int status); /* an exit hook: HS_END_*, status */
HSR_HIDDEN void hsr_end_mpi_started(void);              /* the MPI layer attached */
HSR_HIDDEN void hsr_process_end_write(struct hsr_buf *b, unsigned reason); /* snapshot.c */

/* teardown.c: the ranks a launcher tears down together keep their snapshots */
HSR_HIDDEN void hsr_teardown_join(void);  /* a rank starting (its parent: the launcher) */
HSR_HIDDEN void hsr_teardown_leave(void); /* its final snapshot is written */
HSR_HIDDEN void hsr_teardown_begin(void); /* a signal that ends it: its snapshot begins */
/* its snapshot is written: wait while a sibling writes its own (bounded), then go on */
HSR_HIDDEN void hsr_teardown_end(void);
HSR_HIDDEN void hsr_teardown_after_fork_child(void);
HSR_HIDDEN void hsr_teardown_launcher_ends(void);
HSR_HIDDEN int hsr_reason_final(unsigned reason); /* ending.c: written as the process ends */

/* last_thread.c: the recorder's own threads never keep the process alive */
HSR_HIDDEN void hsr_helper_thread_start(void); /* on the helper thread, first thing */
HSR_HIDDEN void hsr_main_thread_exits(void);   /* pthread_exit: if the caller is main */
HSR_HIDDEN int hsr_main_thread_gone(void);
/* A helper's loop, now and then: once main has called pthread_exit and only the
 * recorder's threads are left, ends the process (exit(0), as glibc would). */
HSR_HIDDEN void hsr_helper_poll(void);
HSR_HIDDEN void hsr_helpers_after_fork_child(void);
/* Field `field` (3: state, 20: num_threads, 22: start time) of a /proc/.../stat file,
 * past the command name (which may hold ')' and spaces): a pointer into buf, or NULL.
 * No malloc: a signal handler may call it. */
HSR_HIDDEN const char *hsr_proc_stat_field(const char *path, int field, char *buf, size_t cap);
/* The same field of a stat file's text already read into buf. */
HSR_HIDDEN const char *hsr_stat_field(const char *buf, int field);
HSR_HIDDEN uint64_t hsr_now_ns(int clock);

/* exec_env.c: the program's environment for an exec, plus our variables and the
 * MPI layer of the exec'd program (program: its path, NULL if unknown) */
HSR_HIDDEN void hsr_exec_env_init(void);
HSR_HIDDEN size_t hsr_exec_env_slots(char *const envp[]);
HSR_HIDDEN size_t hsr_exec_env_bytes(char *const envp[]);
HSR_HIDDEN char *const *hsr_exec_env(char *const envp[], const char *program, char **room,
                                     char *buf, size_t buflen);

/* exec_mpi.c: the MPI a program links (its DT_NEEDED, one level deep) */
enum { HSR_MPI_NONE = 0, HSR_MPI_OPENMPI = 1, HSR_MPI_MPICH = 2 };
HSR_HIDDEN int hsr_mpi_family(const char *path);
/* execvp's PATH search for `file` (into out), file itself if it has a '/', or NULL */
HSR_HIDDEN const char *hsr_exec_resolve(const char *file, char *out, size_t cap);

#endif
