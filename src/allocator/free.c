/* Freeing: free's fast paths (a block of this thread's heap; another heap's small
 * block kept in this thread's cache), huge blocks, pointers we do not own; and the
 * size and ownership of a pointer. free's glibc names are aliases defined here
 * (an alias must live beside its target). */
#include "internal.h"

static void huge_free_counted(void *p, unsigned kind) {
  hs_huge_t *h = hs_huge_of(p, kind);
  hs_heap_t *heap = hs_heap_for_free();
  if (heap != NULL) {
    HS_COUNT(heap->stats.frees[HS_BIN_HUGE], 1);
    HS_COUNT(heap->stats.free_bytes[HS_BIN_HUGE], h->usable);
  } else {
    atomic_fetch_add_explicit(&hs_gstats.orphan_frees, 1, memory_order_relaxed);
  }
  hs_huge_free(h);
}

void hs_free(void *p) {
  unsigned kind = hs_registry_kind(p);       /* NULL: unit 0, never ours */
  if (HS_LIKELY(kind == HS_REG_SEGMENT)) {
    hs_page_t *pg = hs_page_of(hs_segment_of(p), p);
    hs_heap_t *heap = hs_tls_heap;
    hs_block_t *b = p;
    if (HS_LIKELY(pg->heap == heap)) {               /* our own block */
      if (HS_LIKELY(__atomic_load_n(&pg->flags.any, __ATOMIC_RELAXED) == 0)) {
        b->next = pg->free;                          /* LIFO: reused next, still in cache */
        pg->free = b;
        pg->free_is_zero = 0;
        HS_COUNT(heap->stats.frees[pg->class_id], 1);
        if (HS_UNLIKELY((--pg->used == 0) | pg->in_full)) hs_page_after_free(heap, pg);
        return;
      }
    } else if (HS_LIKELY(heap != NULL && __atomic_load_n(&pg->flags.any, __ATOMIC_RELAXED) == 0)) {
      /* another heap's small block: onto this thread's cache for its class */
      size_t cls = pg->class_id;
      hs_page_t *cache = &heap->cache[cls];
      b->next = cache->free;
      cache->free = b;
      if (HS_UNLIKELY(heap->direct[cls] != cache)) hs_direct_set(heap, cls, cache);
      HS_COUNT(heap->stats.frees[cls], 1);
      HS_COUNT(heap->stats.remote_frees, 1);
      if (HS_UNLIKELY(++heap->cache_count[cls] >= hs_cache_limit[cls])) hs_cache_overflow(heap, cls);
      return;
    }
    hs_page_free_generic(heap, pg, p);
    return;
  }
  if (kind != HS_REG_NONE) huge_free_counted(p, kind);
  else if (p != NULL) hs_foreign_free(p);
}

size_t hs_usable_size(const void *p) {
  if (p == NULL) return 0;
  unsigned kind = hs_registry_kind(p);
  if (kind == HS_REG_SEGMENT) {
    hs_page_t *pg = hs_page_of(hs_segment_of(p), p);
    if (!__atomic_load_n(&pg->flags.f.has_aligned, __ATOMIC_RELAXED)) return pg->block_size;
    const uint8_t *b = (const uint8_t *)hs_block_start(pg, p);
    return (size_t)(b + pg->block_size - (const uint8_t *)p);
  }
  if (kind == HS_REG_NONE) return hs_foreign_usable_size((void *)p);
  hs_huge_t *h = hs_huge_of(p, kind);
  return (size_t)(h->block + h->usable - (const uint8_t *)p);
}

int hs_owns(const void *p) { return p != NULL && hs_registry_kind(p) != HS_REG_NONE; }

#ifndef HSMALLOC_NO_OVERRIDE
HS_ALIAS(free, hs_free);
HS_ALIAS(__libc_free, hs_free);
HS_ALIAS(cfree, hs_free);
#endif
