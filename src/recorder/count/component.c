/*
 * component.c — heapscope's own add-on layers (libheapscope_mpi.so): the recorder's
 * side of layer_abi.h.
 *
 * A layer attaches each of its threads once and then brackets every call into its
 * component by incrementing and decrementing hsr_place.in.component, the
 * thread's component depth, directly: no call into the recorder per MPI call.
 * While the depth is nonzero, hsr_current_region (regions.h) maps the region the
 * thread is in to its component child ("[MPI]" under it, interned on first use and
 * cached per parent here), and heap accounting counts the thread's blocks as the
 * component's (heap.c).
 */
#include <stdatomic.h>
#include <string.h>

#include "core/lifecycle.h"
#include "count/regions.h"
#include "layer_abi.h"
#include "timeline/timeline.h"

/* child id + 1 of each parent region; 0 = not interned yet. */
static _Atomic uint32_t child_of[HSR_MAX_REGIONS];
static const char *_Atomic component_name;

uint32_t hsr_component_region(uint32_t parent)
{
    uint32_t c = atomic_load_explicit(&child_of[parent], memory_order_relaxed);
    if (HSR_LIKELY(c))
        return c - 1;
    const char *name = atomic_load_explicit(&component_name, memory_order_acquire);
    if (!name) /* depth set by hand, no layer attached: nothing to map to */
        return parent;
    uint32_t id = hsr_region_intern(parent, name);
    atomic_store_explicit(&child_of[parent], id + 1, memory_order_relaxed);
    return id;
}

int heapscope__layer_attach(const char *component, _Atomic int *armed,
                            struct heapscope_layer_thread *t)
{
    const char *none = NULL;
    atomic_compare_exchange_strong(&component_name, &none, component);
    t->depth = &hsr_place.in.component;
    t->calls = hsr_calipers_thread_calls();
    hsr_calipers_flag(armed);
    atomic_store_explicit(&hsr_calipers_active, 1, memory_order_relaxed); /* sampler arms */
    hsr_end_mpi_started(); /* an exit before MPI_Finalize is a rank torn down (core/ending.c) */
    return 0;
}
