/*
 * heapscope.h — mark regions (phases) of a program for the heapscope profiler.
 *
 * Allocations are counted per region. Regions are process-wide: while the main
 * thread is inside "local", allocations of every thread (OpenMP workers too) count
 * for "local". Regions nest; an allocation counts for the innermost one.
 * heapscope_thread_region_begin/end override the region for the calling thread only.
 *
 * The program must still build and run without the profiler. Two ways:
 *  1. Weak symbols (C/C++): compile with -DHEAPSCOPE_WEAK (or define it before
 *     including this header). Every function is then declared weak, and the macros
 *     HEAPSCOPE_REGION_BEGIN(name) / HEAPSCOPE_REGION_END() / HEAPSCOPE_DUMP() call
 *     it only when libheapscope.so is loaded (by `heapscope record`, via LD_PRELOAD).
 *     No library is needed at link time.
 *  2. The stub library: link with -lheapscope_stub (no-op definitions, also the
 *     way for Fortran). Under `heapscope record` the preloaded recorder's
 *     definitions come first and are the ones called.
 */
#ifndef HEAPSCOPE_H
#define HEAPSCOPE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef HEAPSCOPE_WEAK
#define HEAPSCOPE_API __attribute__((weak))
#else
#define HEAPSCOPE_API
#endif

/* Enter a region named `name` (copied; any length, any characters but '/'). */
HEAPSCOPE_API void heapscope_region_begin(const char *name);
/* Leave the innermost region. Unbalanced ends are ignored (and counted). */
HEAPSCOPE_API void heapscope_region_end(void);
/* Same, for the calling thread only; overrides the process-wide region. */
HEAPSCOPE_API void heapscope_thread_region_begin(const char *name);
HEAPSCOPE_API void heapscope_thread_region_end(void);
/* Write a snapshot of everything recorded so far to the profile file now.
 * Returns 0 on success, -1 if the file could not be written. */
HEAPSCOPE_API int heapscope_dump(void);
/* Start counting again from zero (counts not yet dumped are discarded). */
HEAPSCOPE_API void heapscope_reset(void);
/* 1 when the recorder is loaded and recording, 0 in the stub library. */
HEAPSCOPE_API int heapscope_active(void);

/*
 * The calls of the profiling library of Gomes, Molion et al. ("Memory allocation
 * anomalies in high-performance computing applications"), mapped:
 *   init_size_profiling()  -> heapscope_region_begin("size_profiling")
 *   end_size_profiling()   -> heapscope_region_end()
 *   dump_size_profiling()  -> heapscope_dump()
 *   reset_size_profiling() -> heapscope_reset()
 * Allocations outside init/end are still counted (in the enclosing region), so
 * nothing is lost; `heapscope report --region size_profiling` shows that library's view.
 * The sizes whose stacks are recorded are chosen with `heapscope record --sizes`.
 */
HEAPSCOPE_API void init_size_profiling(void);
HEAPSCOPE_API void end_size_profiling(void);
HEAPSCOPE_API void dump_size_profiling(void);
HEAPSCOPE_API void reset_size_profiling(void);

#ifdef HEAPSCOPE_WEAK
#define HEAPSCOPE_REGION_BEGIN(name) do { if (heapscope_region_begin) heapscope_region_begin(name); } while (0)
#define HEAPSCOPE_REGION_END() do { if (heapscope_region_end) heapscope_region_end(); } while (0)
#define HEAPSCOPE_DUMP() do { if (heapscope_dump) heapscope_dump(); } while (0)
#else
#define HEAPSCOPE_REGION_BEGIN(name) heapscope_region_begin(name)
#define HEAPSCOPE_REGION_END() heapscope_region_end()
#define HEAPSCOPE_DUMP() heapscope_dump()
#endif

#ifdef __cplusplus
}

/* C++: a scope guard. { heapscope::Region r("local"); ... } */
namespace heapscope {
struct Region {
    explicit Region(const char *name) { HEAPSCOPE_REGION_BEGIN(name); }
    ~Region() { HEAPSCOPE_REGION_END(); }
    Region(const Region &) = delete;
    Region &operator=(const Region &) = delete;
};
}
#endif

#endif /* HEAPSCOPE_H */
