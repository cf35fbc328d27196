/*
 * fork.c — tracking around fork: the records and the side table locked in the
 * parent; the child starts from zero, as its counts do.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "track/records.h"
#include "track/table.h"
#include "track/tracking.h"

static void fork_prepare(void)
{
    hsr_track_records_lock();
    hsr_track_table_lock();
}

static void fork_parent(void)
{
    hsr_track_table_unlock();
    hsr_track_records_unlock();
}

/* The parent's blocks the child inherited are forgotten (their frees are not
 * found), the records emptied. */
static void fork_child(void)
{
    hsr_track_table_clear();
    hsr_track_records_clear();
    hsr_track_deferred_reset();
    hsr_track_peak_reset();
}

void hsr_track_atfork(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }
