/*
 * common.h — what every file of libheapscope.so shares: the visibility, TLS and
 * branch-hint macros, the version, the tunables (config.h), and the owner-only
 * counter increment.
 *
 * Each subsystem has its own header in its folder (count/counting.h is the hot
 * path); docs/recorder.md ("Inside") maps them. Nothing in the recorder allocates
 * through the program's allocator: its memory comes from core/pool.c (mmap).
 */
#ifndef HSR_COMMON_H
#define HSR_COMMON_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "profile_format.h"

#define HSR_TLS __thread __attribute__((tls_model("initial-exec")))
#define HSR_LIKELY(x) __builtin_expect(!!(x), 1)
#define HSR_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HSR_HIDDEN __attribute__((visibility("hidden")))

#define HSR_VERSION "0.1.0"

/* Relaxed increment of a counter only its owner thread writes: a plain add on
 * x86-64, but a race-free read for the dumping thread. */
static inline void hsr_bump(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

#endif
