/* Allocation: malloc's fast path, calloc, aligned allocation and realloc. The
 * exported glibc names of these functions are aliases defined here (an alias must
 * live beside its target); free's are in free.c, the rest of glibc's API in glibc.c. */
#include <errno.h>
#include <string.h>

#include "internal.h"

static inline __attribute__((always_inline)) void *alloc_in(hs_heap_t *heap, size_t size, int zero) {
  if (HS_LIKELY(size <= HS_SMALL_MAX)) {
    size_t cls = hs_class_of(size);
    hs_page_t *pg = heap->direct[cls];
    if (HS_LIKELY(pg->free != NULL)) return hs_page_pop(heap, pg, cls, size, zero);
    return hs_page_alloc_slow(heap, size, cls, zero);
  }
  if (size <= HS_LARGE_MAX) return hs_large_alloc(heap, size, zero);
  int zeroed;
  void *p = hs_huge_alloc(size, 0, &zeroed);
  if (p != NULL) {
    if (zero && !zeroed) memset(p, 0, size);
    hs_huge_t *h = hs_huge_of(p, HS_REG_HUGE);
    HS_COUNT(heap->stats.allocs[HS_BIN_HUGE], 1);
    HS_COUNT(heap->stats.alloc_bytes[HS_BIN_HUGE], h->usable);
    HS_COUNT(heap->stats.requested, size);
  }
  return p;
}

static inline __attribute__((always_inline)) void *alloc_checked(size_t size, int zero) {
  hs_heap_t *heap = hs_tls_heap;
  if (HS_UNLIKELY(heap == NULL)) {
    heap = hs_heap_get_slow();
    if (heap == NULL) { errno = ENOMEM; return NULL; }
  }
  void *p = alloc_in(heap, size, zero);
  if (HS_UNLIKELY(p == NULL)) errno = ENOMEM;
  return p;
}

static __attribute__((noinline)) void *malloc_generic(size_t size) { return alloc_checked(size, 0); }

/* The fast path is a leaf: one compare, a table load, a list pop, two counters. */
void *hs_malloc(size_t size) {
  hs_heap_t *heap = hs_tls_heap;
  if (HS_LIKELY(size <= HS_CLASS_TABLE_MAX && heap != NULL)) {
    size_t idx = (size + 7) >> 3;
    hs_page_t *pg = heap->direct8[idx];
    hs_block_t *b = pg->free;
    if (HS_LIKELY(b != NULL)) {
      pg->free = b->next;
      pg->used++;
      HS_COUNT(heap->stats.allocs8[idx], 1);
      HS_COUNT(heap->stats.requested, size);
      return b;
    }
  }
  return malloc_generic(size);
}

void *hs_calloc(size_t n, size_t size) {
  size_t total;
  if (HS_UNLIKELY(__builtin_mul_overflow(n, size, &total))) { errno = ENOMEM; return NULL; }
  return alloc_checked(total, 1);
}

/* `align` is a power of two. Blocks of a class whose size is a multiple of `align`
 * are aligned already (pages start on 64 KiB); otherwise over-allocate and return an
 * aligned pointer inside the block (the page is flagged so free finds the start). */
void *hs_memalign(size_t align, size_t size) {
  if (align <= HS_MAX_ALIGN_SMALL) return hs_malloc(size < 16 && align > 8 ? 16 : size);
  hs_heap_t *heap = hs_heap_get();
  if (heap == NULL) { errno = ENOMEM; return NULL; }
  if (size <= HS_SMALL_MAX && align <= HS_SLICE_SIZE && hs_class_size[hs_class_of(size)] % align == 0)
    return alloc_checked(size, 0);
  if (size > HS_SMALL_MAX && size <= HS_LARGE_MAX && align <= HS_SLICE_SIZE)
    return alloc_checked(size, 0);
  size_t total;
  if (__builtin_add_overflow(size, align - HS_MAX_ALIGN_SMALL, &total)) { errno = ENOMEM; return NULL; }
  if (total > HS_LARGE_MAX) {
    int zeroed;
    void *p = hs_huge_alloc(size, align, &zeroed);
    if (p == NULL) { errno = ENOMEM; return NULL; }
    hs_huge_t *h = hs_huge_of(p, hs_registry_kind(p));
    HS_COUNT(heap->stats.allocs[HS_BIN_HUGE], 1);
    HS_COUNT(heap->stats.alloc_bytes[HS_BIN_HUGE], h->usable);
    HS_COUNT(heap->stats.requested, size);
    return p;
  }
  uint8_t *p = alloc_checked(total, 0);
  if (p == NULL) return NULL;
  uint8_t *q = (uint8_t *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
  if (q != p) {
    /* The block may come from this thread's cache of another heap's blocks, and other
     * threads read the flag to free blocks of the page: atomic accesses only. */
    hs_page_t *pg = hs_page_of(hs_segment_of(p), p);
    if (!__atomic_load_n(&pg->flags.f.has_aligned, __ATOMIC_RELAXED))
      __atomic_store_n(&pg->flags.f.has_aligned, 1, __ATOMIC_RELAXED);
  }
  return q;
}

/* realloc(p, 0) frees and returns NULL, as glibc does. A block keeps its place when
 * the new size fits and uses at least half of it. */
void *hs_realloc(void *p, size_t size) {
  if (p == NULL) return hs_malloc(size);
  if (size == 0) { hs_free(p); return NULL; }
  size_t usable = hs_usable_size(p);
  int ours = hs_owns(p);
  if (ours && size <= usable && size >= usable / 2) return p;
  if (ours && size > HS_SMALL_MAX && size <= HS_LARGE_MAX && hs_large_resize(p, size)) return p;
  void *q = hs_malloc(size);
  if (q == NULL) return NULL;
  memcpy(q, p, size < usable ? size : usable);
  if (ours) hs_free(p);
  else hs_foreign_free(p);
  return q;
}

#ifndef HSMALLOC_NO_OVERRIDE
HS_ALIAS(malloc, hs_malloc);
HS_ALIAS(__libc_malloc, hs_malloc);
HS_ALIAS(calloc, hs_calloc);
HS_ALIAS(__libc_calloc, hs_calloc);
HS_ALIAS(realloc, hs_realloc);
HS_ALIAS(__libc_realloc, hs_realloc);
#endif
