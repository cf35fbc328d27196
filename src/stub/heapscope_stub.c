/* libheapscope_stub.so: no-op definitions of the heapscope.h API, so a program
 * (C, C++ or Fortran) that marks regions links and runs without the profiler.
 * Under `heapscope record`, libheapscope.so is preloaded and its definitions win. */
#include "heapscope.h"

void heapscope_region_begin(const char *name) { (void)name; }
void heapscope_region_end(void) {}
void heapscope_thread_region_begin(const char *name) { (void)name; }
void heapscope_thread_region_end(void) {}
int heapscope_dump(void) { return 0; }
void heapscope_reset(void) {}
int heapscope_active(void) { return 0; }
void init_size_profiling(void) {}
void end_size_profiling(void) {}
void dump_size_profiling(void) {}
void reset_size_profiling(void) {}
