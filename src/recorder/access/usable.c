/*
 * usable.c — malloc_usable_size, interposed: a pool block (access.h) is not the
 * allocator's, which would read a header that is not there; every other pointer goes
 * to the next allocator's. The heap figure (count/heap.c) asks the same way.
 */
#define _GNU_SOURCE
#include "access/internal.h"
#include "hooks/hooks.h"

size_t hsr_access_next_usable(void *p)
{
    static size_t (*_Atomic next)(void *);
    static _Atomic int missing;
    size_t (*f)(void *) = atomic_load_explicit(&next, memory_order_relaxed);
    if (HSR_UNLIKELY(!f)) {
        if (atomic_load(&missing))
            return 0;
        f = (size_t(*)(void *))hsr_next("malloc_usable_size");
        if (!f) {
            atomic_store(&missing, 1);
            return 0;
        }
        atomic_store(&next, f);
    }
    return f(p);
}

size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (HSR_UNLIKELY(hsr_access_owns(p)))
        return hsr_access_usable(p);
    return hsr_access_next_usable(p);
}
