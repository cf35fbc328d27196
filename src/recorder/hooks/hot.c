/*
 * hot.c — which fast paths the hooks may take (hooks.h, struct hsr_hot).
 *
 * A fast path counts an allocation in the calling thread's table and calls the
 * allocator underneath, nothing else: it is right only while no stack is wanted,
 * no block is watched (heap figure, tracking, trace) and the recorder records.
 * With exact stacks a free still wants nothing more (FREES); with sampled ones
 * the allocations also count down to the next sample (SAMPLED); with the heap in use
 * watched (and nothing else) each block's usable size is added or taken away (HEAP);
 * with tracking (and neither the trace nor exact stacks) the hooks count as SAMPLED's
 * do and hand each block to tracking directly (TRACK).
 * Those settings are fixed once the constructor has read them; rather than test
 * each on every call, the hooks test one byte here, recomputed whenever an input
 * changes: the constructor's end, a fork's child, the C++ operators' lookup.
 *
 * The guard keeps the allocator underneath from counting twice what it allocates
 * through the interposed functions (a peer's initialisation, a debugging
 * wrapper). glibc's own malloc and free never call them (no hooks since 2.34;
 * they reach the kernel directly), so over glibc the fast paths do without it:
 * two stores less, and free and delete end in a tail call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "access/access.h"
#include "core/lifecycle.h"
#include "count/heap.h"
#include "count/selection.h"
#include "hooks/hooks.h"
#include "stacks/sampling.h"
#include "trace/trace.h"
#include "track/track.h"

struct hsr_hot hsr_hot;
static int armed;

/* The next malloc and free are glibc's own: libc.so.* is their object. */
static int next_is_glibc(void)
{
    Dl_info m, f;
    if (!dladdr((void *)hsr_real.malloc, &m) || !dladdr((void *)hsr_real.free, &f) ||
        m.dli_fbase != f.dli_fbase || !m.dli_fname)
        return 0;
    const char *slash = strrchr(m.dli_fname, '/');
    return strncmp(slash ? slash + 1 : m.dli_fname, "libc.so.", 8) == 0;
}

void hsr_hot_update(void)
{
    int recording = armed && hsr_real.free && atomic_load(&hsr_recording);
    int count = recording && !hsr_heap_watch;
    int glibc = recording && next_is_glibc();
    /* the heap in use alone (no tracking, no trace, no stacks): each block's usable size
     * read inline from glibc's chunk header, once checked right (count/heap.c) */
    int header = recording && hsr_heap_watch && glibc && hsr_heap_header_usable();
    __atomic_store_n(&hsr_usable_from_header, header, __ATOMIC_RELAXED);
    int heap = header && !hsr_track_on && !hsr_trace_on && !hsr_stacks_on && !hsr_sample_mean;
    /* tracking with sampled stacks or none: every block to tracking, its usable size from
     * the header too; not with --access, whose pool blocks must not reach glibc's free */
    int track = header && hsr_track_on && !hsr_trace_on && !hsr_stacks_on && !hsr_access_on;
    /* exact stacks: a free needs none (no block is watched), so it may still go inline;
     * --access: frees ask glibc's chunk header first (access/access.h), once checked right */
    int c = heap              ? HSR_FAST_HEAP
            : track           ? HSR_FAST_TRACK
            : !count          ? HSR_FAST_NONE
            : hsr_stacks_on   ? (glibc ? HSR_FAST_FREES : HSR_FAST_NONE)
            : !glibc          ? HSR_FAST_GUARDED
            : hsr_access_on   ? (hsr_heap_header_usable() ? HSR_FAST_ACCESS : HSR_FAST_GUARDED)
            : hsr_sample_mean ? HSR_FAST_SAMPLED
                              : HSR_FAST_BARE;
    __atomic_store_n(&hsr_hot.c, c, __ATOMIC_RELAXED);
    __atomic_store_n(&hsr_hot.cxx, hsr_ops_wrap_malloc ? c : HSR_FAST_NONE, __ATOMIC_RELAXED);
}

void hsr_hot_arm(void)
{
    armed = 1;
    hsr_hot_update();
}
