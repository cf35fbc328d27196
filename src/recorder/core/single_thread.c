/*
 * single_thread.c — the recorder's own threads leave a single-threaded program
 * single-threaded in glibc's eyes.
 *
 * glibc (2.32 on) keeps one flag, __libc_single_threaded, that pthread_create clears
 * for good. While it is set, glibc's malloc and free take no arena lock and no atomic
 * instruction, its normal mutexes none either, and libstdc++'s reference counts are
 * plain adds. The timeline's sampler thread (and record --access's watcher,
 * access/watch.c) would clear it in every program: on a C
 * code whose blocks go beyond glibc's per-thread cache (rows of a matrix allocated,
 * then freed) each malloc and free then pays a lock: +20-30% of a plain run, where
 * counting itself costs a few percent.
 *
 * So a recorder thread started while the flag is set leaves it set. This is safe only
 * because the recorder's threads never enter what the flag lets glibc leave
 * unsynchronized: they never call the allocator (the recorder's memory is its own:
 * core/pool.c), lock no pthread mutex a program thread may lock (their locks are
 * atomic words), use no stdio stream and no translated message (strerror's catalogs
 * are loaded with malloc). The program's first thread clears the flag as it would
 * have. One behaviour differs: setuid() and its kin, called by a program glibc takes
 * for single-threaded, change the calling thread's ids only, so the sampler keeps the
 * ids it had (it reads /proc/self and appends to the profile it has open).
 *
 * The flag exists twice in a program that reads it itself: its own copy (a copy
 * relocation, which the program and every library's references see) and glibc's
 * (what malloc and pthread_create test; pthread_create clears both). Both are set
 * again, glibc's found with dlsym past this library.
 */
#define _GNU_SOURCE
#include "core/single_thread.h"
#include "hooks/hooks.h"

#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define HSR_HAVE_SINGLE_THREADED 1
#endif
#endif

static char *glibc_flag; /* glibc's own __libc_single_threaded; NULL: none (old glibc) */
static int looked;

int hsr_single_threaded(void)
{
#ifdef HSR_HAVE_SINGLE_THREADED
    if (!looked) {
        glibc_flag = (char *)hsr_next("__libc_single_threaded");
        looked = 1;
    }
    return glibc_flag && __atomic_load_n(glibc_flag, __ATOMIC_RELAXED) &&
           __atomic_load_n(&__libc_single_threaded, __ATOMIC_RELAXED);
#else
    return 0;
#endif
}

void hsr_single_threaded_again(void)
{
#ifdef HSR_HAVE_SINGLE_THREADED
    __atomic_store_n(glibc_flag, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&__libc_single_threaded, 1, __ATOMIC_RELAXED);
#endif
}
