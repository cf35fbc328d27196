/* Pages: the per-class page queues of a heap, carving fresh blocks, the
 * allocation slow path, owner-side frees, and page retirement. */
#include <string.h>

#include "internal.h"

hs_page_t hs_page_empty;   /* the "current page" of a class that has none: never has a free block */

static void queue_remove(hs_page_queue_t *q, hs_page_t *pg) {
  if (pg->prev) pg->prev->next = pg->next;
  else q->first = pg->next;
  if (pg->next) pg->next->prev = pg->prev;
  else q->last = pg->prev;
  pg->next = pg->prev = NULL;
}

static void queue_push_front(hs_page_queue_t *q, hs_page_t *pg) {
  pg->prev = NULL;
  pg->next = q->first;
  if (q->first) q->first->prev = pg;
  else q->last = pg;
  q->first = pg;
}

static void queue_push_back(hs_page_queue_t *q, hs_page_t *pg) {
  pg->next = NULL;
  pg->prev = q->last;
  if (q->last) q->last->next = pg;
  else q->first = pg;
  q->last = pg;
}

void hs_page_set_direct(hs_heap_t *heap, size_t cls) {
  hs_page_t *first = heap->queue[cls].first;
  hs_direct_set(heap, cls, first ? first : &hs_page_empty);
}

/* Link a fresh run of blocks onto the (empty) free list, a few KiB at a time so
 * that untouched memory stays untouched. */
static void page_extend(hs_page_t *pg) {
  size_t bsize = pg->block_size;
  size_t n = HS_EXTEND_BYTES / bsize;
  if (n < 1) n = 1;
  if (n > pg->reserved - pg->capacity) n = pg->reserved - pg->capacity;
  uint8_t *first = pg->start + (size_t)pg->capacity * bsize;
  uint8_t *p = first;
  for (size_t i = 1; i < n; i++, p += bsize) ((hs_block_t *)p)->next = (hs_block_t *)(p + bsize);
  ((hs_block_t *)p)->next = NULL;
  pg->free = (hs_block_t *)first;
  pg->free_is_zero = pg->span_zero;
  pg->capacity += (uint32_t)n;
}

static hs_page_t *page_new(hs_heap_t *heap, size_t cls) {
  hs_page_t *pg = hs_segment_page_alloc(heap, hs_class_slices[cls]);
  if (pg == NULL) return NULL;
  pg->class_id = (uint16_t)cls;
  pg->block_size = hs_class_size[cls];
  pg->reserved = (uint32_t)(((size_t)pg->slice_count * HS_SLICE_SIZE) / pg->block_size);
  return pg;
}

static void page_free(hs_heap_t *heap, hs_page_t *pg) {
  if (!pg->flags.f.is_large) {
    hs_page_queue_t *q = pg->in_full ? &heap->full : &heap->queue[pg->class_id];
    queue_remove(q, pg);
    if (heap->direct[pg->class_id] == pg) hs_page_set_direct(heap, pg->class_id);
  }
  hs_segment_page_free(heap, pg);
}

/* A page whose blocks are all free goes back to its segment, unless it is the
 * class's current page (keeping one avoids freeing and re-carving a page when a
 * program allocates and frees one block in a loop). */
static void page_retire(hs_heap_t *heap, hs_page_t *pg) {
  if (!pg->flags.f.is_large && heap->direct[pg->class_id] == pg) return;
  page_free(heap, pg);
}

/* After the owner put a block back: a parked full page can give again; an empty
 * page may go back to its segment. */
void hs_page_after_free(hs_heap_t *heap, hs_page_t *pg) {
  if (pg->in_full) {
    queue_remove(&heap->full, pg);
    pg->in_full = 0;
    queue_push_back(&heap->queue[pg->class_id], pg);
    if (heap->direct[pg->class_id] == &hs_page_empty) hs_page_set_direct(heap, pg->class_id);
  }
  if (pg->used == 0) page_retire(heap, pg);
}

void hs_page_free_block(hs_heap_t *heap, hs_page_t *pg, hs_block_t *b) {
  b->next = pg->local_free;
  pg->local_free = b;
  --pg->used;
  if (pg->in_full || pg->used == 0) hs_page_after_free(heap, pg);
}

void *hs_page_alloc_slow(hs_heap_t *heap, size_t size, size_t cls, int zero) {
  HS_COUNT(heap->stats.slow, 1);
  if (--heap->slow_until_decay == 0) hs_heap_maintenance(heap);
  hs_page_t *pg = &heap->cache[cls];
  if (pg->free != NULL) goto pop;                /* other heaps' blocks freed here: hot */
  heap->cache_count[cls] = 0;
  if (atomic_load_explicit(&heap->remote, memory_order_relaxed) != NULL) hs_heap_drain_remote(heap);
  hs_page_queue_t *q = &heap->queue[cls];
  while ((pg = q->first) != NULL) {
    if (pg->free == NULL) {
      if (pg->local_free != NULL) {
        pg->free = pg->local_free;
        pg->local_free = NULL;
        pg->free_is_zero = 0;
      } else if (pg->capacity < pg->reserved) {
        page_extend(pg);
      }
    }
    if (pg->free != NULL) break;
    queue_remove(q, pg);             /* nothing left: park it until a block comes back */
    pg->in_full = 1;
    queue_push_front(&heap->full, pg);
  }
  if (pg == NULL) {
    pg = page_new(heap, cls);
    if (pg == NULL) {
      hs_page_set_direct(heap, cls);
      return NULL;
    }
    queue_push_front(q, pg);
    page_extend(pg);
  }
pop:
  if (heap->direct[cls] != pg) hs_direct_set(heap, cls, pg);
  return hs_page_pop(heap, pg, cls, size, zero);
}

void hs_page_free_generic(hs_heap_t *self, hs_page_t *pg, void *p) {
  hs_block_t *b = __atomic_load_n(&pg->flags.f.has_aligned, __ATOMIC_RELAXED) ? hs_block_start(pg, p) : (hs_block_t *)p;
  size_t bin = pg->class_id;
  if (self == NULL) self = hs_heap_for_free();
  if (self == NULL) {
    atomic_fetch_add_explicit(&hs_gstats.orphan_frees, 1, memory_order_relaxed);
  } else {
    HS_COUNT(self->stats.frees[bin], 1);
    if (bin == HS_BIN_LARGE) HS_COUNT(self->stats.free_bytes[bin], pg->block_size);
    if (pg->heap != self) HS_COUNT(self->stats.remote_frees, 1);
  }
  if (pg->heap == self) {
    hs_page_free_block(self, pg, b);
  } else if (self != NULL && bin != HS_BIN_LARGE) {  /* keep it in this thread's cache */
    hs_page_t *cache = &self->cache[bin];
    b->next = cache->free;
    cache->free = b;
    if (self->direct[bin] != cache) hs_direct_set(self, bin, cache);
    if (++self->cache_count[bin] >= hs_cache_limit[bin]) hs_cache_overflow(self, bin);
  } else {
    hs_remote_free(self, pg, b);
  }
}

/* Give back every page with no block out (used when a heap is abandoned or collected). */
void hs_heap_collect_empty(hs_heap_t *heap) {
  for (size_t cls = 0; cls < HS_CLASSES; cls++) {
    hs_page_t *pg = heap->queue[cls].first;
    while (pg != NULL) {
      hs_page_t *next = pg->next;
      if (pg->used == 0) {
        queue_remove(&heap->queue[cls], pg);
        hs_segment_page_free(heap, pg);
      }
      pg = next;
    }
    hs_page_set_direct(heap, cls);
  }
}
