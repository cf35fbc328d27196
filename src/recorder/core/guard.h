/*
 * guard.h — the thread-local re-entrancy guard.
 *
 * Set while a hook does its own work (calling the real allocator, counting,
 * unwinding, dumping). Any allocation made meanwhile on this thread — by the real
 * operator new calling malloc, by libunwind, by the dynamic linker — goes straight
 * to the real function and is not counted. Initial-exec TLS: reading it never
 * calls into the dynamic linker (dynamic TLS may call malloc).
 */
#ifndef HSR_GUARD_H
#define HSR_GUARD_H

#include "common.h"

extern HSR_HIDDEN HSR_TLS int hsr_guard;

/* For functions a C++ exception may unwind through (operator new): the guard is
 * dropped by a cleanup handler, which runs during unwinding (-fexceptions). */
static inline void hsr_guard_drop(int *unused)
{
    (void)unused;
    hsr_guard = 0;
}

#endif
