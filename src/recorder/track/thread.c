/*
 * thread.c — a thread's tracking state (thread.h), mapped on its first tracked
 * birth or free. Only the record's owner makes it; other threads read it.
 */
#define _GNU_SOURCE
#include "count/thread.h"
#include "core/pool.h"
#include "track/thread.h"

struct hsr_track_thread *hsr_track_thread_new(struct hsr_thread *t)
{
    struct hsr_track_thread *s = hsr_map(sizeof *s);
    if (s)
        atomic_store_explicit(&t->track, s, memory_order_release);
    return s;
}
