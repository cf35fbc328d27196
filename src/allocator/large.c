/* Large blocks (above HS_SMALL_MAX, up to HS_LARGE_MAX): a page of one block, a run
 * of whole slices, which realloc can grow or shrink in place. */
#include <string.h>

#include "internal.h"

void *hs_large_alloc(hs_heap_t *heap, size_t size, int zero) {
  HS_COUNT(heap->stats.slow, 1);
  if (--heap->slow_until_decay == 0) hs_heap_maintenance(heap);
  if (atomic_load_explicit(&heap->remote, memory_order_relaxed) != NULL) hs_heap_drain_remote(heap);
  size_t slices = (size + HS_SLICE_SIZE - 1) >> HS_SLICE_SHIFT;
  hs_page_t *pg = hs_segment_page_alloc(heap, slices);
  if (pg == NULL) return NULL;
  pg->class_id = HS_BIN_LARGE;
  pg->flags.f.is_large = 1;
  pg->block_size = slices * HS_SLICE_SIZE;
  pg->reserved = pg->capacity = pg->used = 1;
  HS_COUNT(heap->stats.allocs[HS_BIN_LARGE], 1);
  HS_COUNT(heap->stats.alloc_bytes[HS_BIN_LARGE], pg->block_size);
  HS_COUNT(heap->stats.requested, size);
  if (zero && !pg->span_zero) memset(pg->start, 0, size);
  return pg->start;
}

/* A large block of this thread's heap grows into the free slices after it, or gives
 * back the slices it no longer needs. */
int hs_large_resize(void *p, size_t size) {
  if (hs_registry_kind(p) != HS_REG_SEGMENT) return 0;
  hs_page_t *pg = hs_page_of(hs_segment_of(p), p);
  hs_heap_t *heap = hs_tls_heap;
  if (!pg->flags.f.is_large || pg->flags.f.has_aligned || pg->heap != heap || heap == NULL) return 0;
  size_t old = pg->block_size;
  if (!hs_segment_page_resize(heap, pg, (size + HS_SLICE_SIZE - 1) >> HS_SLICE_SHIFT)) return 0;
  if (pg->block_size > old) HS_COUNT(heap->stats.alloc_bytes[HS_BIN_LARGE], pg->block_size - old);
  else HS_COUNT(heap->stats.free_bytes[HS_BIN_LARGE], old - pg->block_size);
  return 1;
}

