/*
 * spin.h — the spinlock of the side table's shards (table.h, wide.h) and of the
 * records' index: an atomic word, no mutex (a signal handler's snapshot may try it;
 * glibc's mutexes would also be elided while the process counts as single-threaded,
 * core/single_thread.c).
 */
#ifndef HSR_TRACK_SPIN_H
#define HSR_TRACK_SPIN_H

#include "common.h"

__attribute__((noinline, cold)) HSR_HIDDEN void hsr_spin_wait(_Atomic int *l);

static inline void hsr_spin_lock(_Atomic int *l)
{
    if (HSR_UNLIKELY(atomic_exchange_explicit(l, 1, memory_order_acquire)))
        hsr_spin_wait(l);
}

static inline int hsr_spin_trylock(_Atomic int *l)
{
    return !atomic_exchange_explicit(l, 1, memory_order_acquire);
}

static inline void hsr_spin_unlock(_Atomic int *l)
{
    atomic_store_explicit(l, 0, memory_order_release);
}

#endif
