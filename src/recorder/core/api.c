/*
 * api.c — the functions of heapscope.h, as the recorder implements them
 * (libheapscope_stub.so has the no-op versions), and the calls of the profiling
 * library of "Memory allocation anomalies in high-performance computing
 * applications" mapped onto them (mapping documented in heapscope.h).
 */
#include "heapscope.h"

#include "core/guard.h"
#include "core/lifecycle.h"
#include "count/regions.h"
#include "hooks/hooks.h"
#include "output/snapshot.h"

/* Region calls may run before our constructor (other libraries' constructors). */
#define READY()                           \
    do {                                  \
        if (HSR_UNLIKELY(!hsr_real.free)) \
            hsr_resolve();                \
    } while (0)

static void region_call(const char *name, int begin, int thread_only)
{
    READY();
    int saved = hsr_guard;
    hsr_guard = 1; /* the region registry's own work is not the program's */
    if (begin)
        hsr_regions_begin(name, thread_only);
    else
        hsr_regions_end(thread_only);
    hsr_guard = saved;
}

void heapscope_region_begin(const char *name) { region_call(name, 1, 0); }
void heapscope_region_end(void) { region_call(NULL, 0, 0); }
void heapscope_thread_region_begin(const char *name) { region_call(name, 1, 1); }
void heapscope_thread_region_end(void) { region_call(NULL, 0, 1); }

int heapscope_dump(void)
{
    if (!atomic_load(&hsr_recording))
        return -1;
    return hsr_snapshot(HS_REASON_API, 0);
}

void heapscope_reset(void)
{
    if (atomic_load(&hsr_recording))
        hsr_snapshot_reset_baseline();
}

int heapscope_active(void) { return atomic_load(&hsr_recording) ? 1 : 0; }

void init_size_profiling(void) { heapscope_region_begin("size_profiling"); }
void end_size_profiling(void) { heapscope_region_end(); }
void dump_size_profiling(void) { (void)heapscope_dump(); }
void reset_size_profiling(void) { heapscope_reset(); }
