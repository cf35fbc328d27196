/*
 * component.c — entry points for heapscope's own add-on layers (libheapscope_mpi.so):
 * switch the calling thread into a named child region of its current region and back,
 * without touching the thread's region stack (the layer restores the saved value).
 * While inside, hs_in_component is nonzero: heap accounting counts the thread's
 * blocks as the component's (heap_accounting.c).
 */
#include <stdatomic.h>
#include <string.h>

#include "recorder.h"

HS_TLS int hs_in_component;  /* depth of enter/restore pairs on this thread */

/* child id + 1 of (parent, cached_name); 0 = not interned yet. */
static _Atomic uint32_t child_of[HS_MAX_REGIONS];
static const char *_Atomic cached_name;

static uint32_t child_region(const char *name)
{
    uint32_t parent = hs_current_region();
    const char *cached = atomic_load_explicit(&cached_name, memory_order_acquire);
    if (!cached) {
        atomic_compare_exchange_strong(&cached_name, &cached, name);
        cached = atomic_load_explicit(&cached_name, memory_order_acquire);
    }
    int cacheable = cached == name && parent < HS_MAX_REGIONS;
    if (cacheable) {
        uint32_t c = atomic_load_explicit(&child_of[parent], memory_order_relaxed);
        if (c)
            return c - 1;
    }
    /* Intern through the thread region stack: push, read, pop. */
    uint32_t saved = hs_thread_region;
    hs_regions_begin(name, 1);
    uint32_t now = hs_thread_region;
    hs_regions_end(1);
    hs_thread_region = saved;
    if (now == saved)  /* region stack full: no new region, stay where we are */
        return parent;
    if (cacheable)
        atomic_store_explicit(&child_of[parent], now, memory_order_relaxed);
    return now - 1;
}

unsigned heapscope__thread_region_enter(const char *child_name)
{
    uint32_t previous = hs_thread_region;
    hs_thread_region = child_region(child_name) + 1;
    hs_in_component++;
    return previous;
}

void heapscope__thread_region_restore(unsigned previous)
{
    hs_thread_region = previous;
    if (hs_in_component > 0)
        hs_in_component--;
}
