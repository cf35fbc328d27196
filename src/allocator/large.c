/* Large blocks (above HSM_SMALL_MAX, up to HSM_LARGE_MAX): a page of one block, a run
 * of whole slices, which realloc can grow or shrink in place. */
#include <string.h>

#include "internal.h"

void *hsm_large_alloc(hsm_heap_t *heap, size_t size, int zero) {
  HSM_COUNT(heap->stats.slow[HSM_BIN_LARGE], 1);
  uint64_t last = heap->sweep_ms, now = hsm_now_ms(); /* (the tick may sweep: before it) */
  hsm_heap_slow_tick(heap, HSM_BIN_LARGE);
  if (--heap->slow_until_decay == 0) hsm_heap_maintenance(heap);
  /* No sweep for HSM_SWEEP_STALE_MS (few slow paths: a program in its steady state on
   * the fast paths): the caches of the classes above 8 KiB go home now, two sweeps in a
   * row, and their pages with them, before the block is placed, perhaps on their slices.
   * GROMACS takes no slow path after its start-up: a 128 KiB block freed then sat in
   * its cache, its page resident, to the 1 MiB buffer of its last steps (its peak). The
   * time is read before the tick, whose own sweep (every 16th slow path, GROMACS's first
   * 1 MiB buffer) would only see the class allocated since the sweep before. The first
   * large allocation before any sweep only starts the clock. */
  if (last != 0 && now - last >= HSM_SWEEP_STALE_MS) {
    hsm_cache_sweep_big(heap);
    hsm_cache_sweep_big(heap);
  } else if (heap->sweep_ms == 0) {
    heap->sweep_ms = now;
  }
  if (atomic_load_explicit(&heap->remote, memory_order_relaxed) != NULL)
    hsm_heap_drain_remote(heap);
  size_t slices = (size + HSM_SLICE_SIZE - 1) >> HSM_SLICE_SHIFT;
  hsm_page_t *pg = hsm_segment_page_alloc(heap, slices);
  if (pg == NULL) return NULL;
  pg->class_id = HSM_BIN_LARGE;
  pg->flags.f.is_large = 1;
  pg->block_size = slices * HSM_SLICE_SIZE;
  pg->reserved = pg->used = 1;
  HSM_COUNT(heap->stats.allocs[HSM_BIN_LARGE], 1);
  HSM_COUNT(heap->stats.alloc_bytes[HSM_BIN_LARGE], pg->block_size);
  HSM_COUNT(heap->stats.requested[HSM_BIN_LARGE], size);
  if (zero && !pg->span_zero) memset(pg->start, 0, size);
  return pg->start;
}

/* A large block of this thread's heap grows into the free slices after it (or, when
 * they are too few, slides down into free slices before it), or gives back the slices
 * it no longer needs. Returns the block's (possibly new) address, or NULL. */
void *hsm_large_resize(void *p, size_t size) {
  if (hsm_registry_kind(p) != HSM_REG_SEGMENT) return NULL;
  hsm_page_t *pg = hsm_page_of(hsm_segment_of(p), p);
  hsm_heap_t *heap = hsm_tls_heap_or_null();
  if (!pg->flags.f.is_large || pg->flags.f.has_aligned || pg->heap != heap || heap == NULL)
    return NULL;
  size_t old = pg->block_size, slices = (size + HSM_SLICE_SIZE - 1) >> HSM_SLICE_SHIFT;
  void *q = p;
  if (!hsm_segment_page_resize(heap, pg, slices)) {
    q = hsm_segment_page_slide(heap, pg, slices);
    if (q == NULL) return NULL;
  }
  if (slices * HSM_SLICE_SIZE > old)
    HSM_COUNT(heap->stats.alloc_bytes[HSM_BIN_LARGE], slices * HSM_SLICE_SIZE - old);
  else HSM_COUNT(heap->stats.free_bytes[HSM_BIN_LARGE], old - slices * HSM_SLICE_SIZE);
  return q;
}
