/*
 * api.c — the functions of heapscope.h, as the recorder implements them
 * (libheapscope_stub.so has the no-op versions), and the calls of the seed
 * paper's profiling library mapped onto them (mapping documented in heapscope.h).
 */
#include "heapscope.h"

#include "guard.h"
#include "recorder.h"

/* Region calls may run before our constructor (other libraries' constructors). */
#define READY()                         \
    do {                                \
        if (HS_UNLIKELY(!hs_real.free)) \
            hs_resolve();               \
    } while (0)

static void region_call(const char *name, int begin, int thread_only)
{
    READY();
    int saved = hs_guard;
    hs_guard = 1;  /* the region registry's own work is not the program's */
    if (begin)
        hs_regions_begin(name, thread_only);
    else
        hs_regions_end(thread_only);
    hs_guard = saved;
}

void heapscope_region_begin(const char *name) { region_call(name, 1, 0); }
void heapscope_region_end(void) { region_call(NULL, 0, 0); }
void heapscope_thread_region_begin(const char *name) { region_call(name, 1, 1); }
void heapscope_thread_region_end(void) { region_call(NULL, 0, 1); }

int heapscope_dump(void)
{
    if (!atomic_load(&hs_recording))
        return -1;
    return hs_snapshot(HS_REASON_API, 0);
}

void heapscope_reset(void)
{
    if (atomic_load(&hs_recording))
        hs_snapshot_reset_baseline();
}

int heapscope_active(void)
{
    return atomic_load(&hs_recording) ? 1 : 0;
}

void init_size_profiling(void) { heapscope_region_begin("size_profiling"); }
void end_size_profiling(void) { heapscope_region_end(); }
void dump_size_profiling(void) { (void)heapscope_dump(); }
void reset_size_profiling(void) { heapscope_reset(); }
