/*
 * single_thread.h — the recorder's own threads leave a single-threaded program
 * single-threaded in glibc's eyes (single_thread.c).
 */
#ifndef HSR_SINGLE_THREAD_H
#define HSR_SINGLE_THREAD_H

#include "common.h"

/* Whether glibc takes the process for single-threaded now (0 where it cannot say). */
HSR_HIDDEN int hsr_single_threaded(void);
/* After starting a recorder thread in a process hsr_single_threaded() said was alone. */
HSR_HIDDEN void hsr_single_threaded_again(void);

#endif
