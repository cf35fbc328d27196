/*
 * hot.c — which fast paths the hooks may take (hooks.h, struct hsr_hot).
 *
 * A fast path counts an allocation in the calling thread's table and calls the
 * allocator underneath, nothing else: it is right only while no stack is wanted,
 * no block is watched (heap figure, tracking, trace) and the recorder records.
 * Those settings are fixed once the constructor has read them; rather than test
 * each on every call, the hooks test one byte here, recomputed whenever an input
 * changes: the constructor's end, a fork's child, the C++ operators' lookup.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "core/lifecycle.h"
#include "count/heap.h"
#include "count/selection.h"
#include "hooks/hooks.h"

struct hsr_hot hsr_hot;
static int armed;

void hsr_hot_update(void)
{
    int count = armed && hsr_real.free && atomic_load(&hsr_recording) && !hsr_stacks_on &&
                !hsr_heap_watch;
    int cxx = count && hsr_ops_wrap_malloc;
    __atomic_store_n(&hsr_hot.count, count, __ATOMIC_RELAXED);
    __atomic_store_n(&hsr_hot.cxx, cxx, __ATOMIC_RELAXED);
}

void hsr_hot_arm(void)
{
    armed = 1;
    hsr_hot_update();
}
