/*
 * lifecycle.h — when the recorder starts, dumps and stops (lifecycle.c): its
 * settings, the recording switch, the dump signals; and the environment an
 * exec'd child needs to be recorded (exec_env.c).
 */
#ifndef HSR_LIFECYCLE_H
#define HSR_LIFECYCLE_H

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
HSR_HIDDEN void hsr_init(void);            /* idempotent */
HSR_HIDDEN void hsr_warn(const char *msg); /* "heapscope: <msg>\n" on stderr */
HSR_HIDDEN void hsr_before_exec(void);
HSR_HIDDEN void hsr_before_exit_now(void);   /* _exit: dump if this process owns the file */
HSR_HIDDEN int hsr_signal_owned(int sig);    /* our handler is installed */
HSR_HIDDEN void hsr_signal_release(int sig); /* the program takes the signal over */
HSR_HIDDEN uint64_t hsr_now_ns(int clock);

/* exec_env.c: the program's environment for an exec, plus our variables */
HSR_HIDDEN void hsr_exec_env_init(void);
HSR_HIDDEN size_t hsr_exec_env_slots(char *const envp[]);
HSR_HIDDEN size_t hsr_exec_env_bytes(char *const envp[]);
HSR_HIDDEN char *const *hsr_exec_env(char *const envp[], char **room, char *buf, size_t buflen);

#endif
