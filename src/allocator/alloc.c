/* Allocation: malloc's fast path, calloc, aligned allocation and realloc. The
 * exported glibc names of these functions are aliases defined here (an alias must
 * live beside its target); free's are in free.c, the rest of glibc's API in glibc.c. */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* csize: the size whose class serves the request (operator new rounds packed sizes up
 * to 16: hsm_new_malloc); size: the request, as counted. */
static inline __attribute__((always_inline)) void *alloc_sized(hsm_heap_t *heap, size_t csize,
                                                               size_t size, int zero) {
  size_t cls;
  if (HSM_LIKELY(size <= HSM_SMALL_MAX) ||
      (HSM_UNLIKELY(heap->hot_big_n != 0) && (cls = hsm_hot_big_class(heap, size)) != 0)) {
    if (size <= HSM_SMALL_MAX) cls = hsm_heap_class_of(heap, csize);
    hsm_page_t *pg = &heap->cache[cls];
    if (HSM_LIKELY(pg->free != NULL)) return hsm_page_pop(heap, pg, cls, size, zero);
    return hsm_page_alloc_slow(heap, size, cls, zero);
  }
  if (size <= HSM_LARGE_MAX) {
    hsm_block_t *b = hsm_large_alloc(heap, size, zero);
    if (b != NULL) b->mark = 0; /* the slices may hold a free mark from an earlier page */
    return b;
  }
  size_t dirty;
  void *p = hsm_huge_alloc(size, 0, &dirty);
  if (p != NULL) {
    if (zero && dirty) memset(p, 0, dirty < size ? dirty : size);
    hsm_huge_t *h = hsm_huge_of(p, HSM_REG_HUGE);
    HSM_COUNT(heap->stats.allocs[HSM_BIN_HUGE], 1);
    HSM_COUNT(heap->stats.alloc_bytes[HSM_BIN_HUGE], h->usable);
    HSM_COUNT(heap->stats.requested[HSM_BIN_HUGE], size);
  }
  return p;
}

/* csize as in alloc_sized (a default chain serves csize: it keeps the alignment too) */
static inline __attribute__((always_inline)) void *alloc_checked_sized(size_t csize, size_t size,
                                                                       int zero) {
  hsm_heap_t *heap = hsm_tls_heap;
  if (HSM_UNLIKELY(heap == &hsm_heap_empty)) {
    heap = hsm_heap_get_slow();
    if (heap == NULL) {
      errno = ENOMEM;
      return NULL;
    }
  }
  if (HSM_UNLIKELY(heap->chain != NULL)) return hsm_chain_alloc_default(heap->chain, csize, zero);
  void *p = HSM_UNLIKELY(hsm_secure) ? hsm_secure_alloc(heap, csize, size, zero)
                                     : alloc_sized(heap, csize, size, zero);
  /* after: the window's allocations are all served by the classes it began with; the
   * size whose class serves it (new's 16-aligned sizes are not a packed class's) */
  heap = hsm_tls_heap; /* the slow path may have swapped it (hsm_heap_absorb) */
  if (HSM_UNLIKELY(heap->sample_left != 0)) hsm_hot_sample(heap, csize);
  if (HSM_UNLIKELY(p == NULL)) errno = ENOMEM;
  return p;
}

/* malloc's and calloc's: the class of hsm_malloc_csize (16-byte aligned by default) */
static inline __attribute__((always_inline)) void *alloc_checked(size_t size, int zero) {
  return alloc_checked_sized(hsm_malloc_csize(size), size, zero);
}

/* malloc's fallback: the class's cache refilled, or a size the fast path does not take
 * (secure mode's every allocation: hsm_secure_alloc). */
static __attribute__((noinline)) void *malloc_checked(size_t size) {
  return alloc_checked(size, 0);
}

/* Secure mode's malloc of a request below the heap's secure_lim (its fast_direct holds
 * no page): a block of the class of the request + 8 (16-aligned) popped from the
 * thread's cache, checked, and sealed (secure.c); an empty cache, hsm_secure_alloc
 * through malloc_checked, as every request secure_lim turns away (a large one, by way
 * of malloc_big; a sampling window, a default chain). */
static __attribute__((noinline)) void *malloc_secure(size_t size, hsm_heap_t *heap) {
  /* the class of (size + 8) rounded up to 16: class8's entry 2 * ((size + 23) / 16)
   * (two instructions fewer than the rounding and the shift) */
  size_t cls = heap->class8[((size + 23) >> 4) * 2];
  hsm_page_t *cache = &heap->cache[cls];
  hsm_block_t *b = cache->free;
  if (HSM_LIKELY(b != NULL)) {
    hsm_secure_check_inline(b);
    cache->free = (hsm_block_t *)((uintptr_t)b->next ^ hsm_remote_key);
    b->mark = 0;
    cache->used++;
    hsm_count_class(heap, cls, size);
    hsm_seal_inline(b, hsm_class_size[cls], size);
    return b;
  }
  return malloc_checked(size);
}

/* The fast paths' pop of block b, the first of cache pg (a fast_direct entry, never a
 * secure page: no decoding), for a request of `size` in class cls: its two counters. */
static inline __attribute__((always_inline)) void *leaf_pop(hsm_heap_t *heap, hsm_page_t *pg,
                                                            hsm_block_t *b, size_t cls,
                                                            size_t size) {
  pg->free = b->next;
  b->mark = 0; /* live: a free of it is not a double free */
  pg->used++;
  hsm_count_class(heap, cls, size);
  return b;
}

/* malloc's route for a request above HSM_CLASS_TABLE_MAX (the small fast path's
 * table): a hot class of the heap's above 4 KiB (hot.c: the ghost-layer arrays of
 * 2^k + 2 doubles, 4,112 .. 65,552 bytes) pops its cache as the small fast path does,
 * found by a look through the heap's few big hot classes (one compare each), and a
 * leaf too; the rest, and an empty cache, go on to malloc_checked, which counts and
 * refills. fast_direct holds hsm_page_empty wherever the fast path must miss (a
 * hot-size window samples, a default chain, secure mode), so those take the checked
 * path here too. Before, such a request took malloc_checked's whole generic path: its
 * stack frame, the heap's checks, the class looked up twice (about 75 instructions a
 * malloc; 28 with malloc's own at the first key). */
static __attribute__((noinline)) void *malloc_big(size_t size, hsm_heap_t *heap) {
  const size_t n = heap->hot_big_n;
  if (n == 0) return malloc_checked(size);
  /* hsm_hot_big_class's look-up written out: called, its 0 for "none" is tested once
   * more after the loop (3 instructions more a call on this route, callgrind) */
  const size_t key = (size + 15) >> 4;
  for (size_t i = 0; i < n; i++) {
    if (heap->hot_big_key[i] != key) continue;
    size_t cls = heap->hot_big_cls[i];
    hsm_page_t *pg = heap->fast_direct[cls];
    hsm_block_t *b = pg->free;
    if (HSM_LIKELY(b != NULL)) return leaf_pop(heap, pg, b, cls, size);
    break;
  }
  return malloc_checked(size);
}

/* The fast path is a leaf: one compare (against the heap's fast_lim, not a constant, so
 * that secure mode skips it at no cost to the default mode), the class by size (no
 * index to compute), its current page, a list pop, two counters. A thread without a
 * heap yet has hsm_heap_empty, whose fast_lim is 0. */
void *hsm_malloc(size_t size) {
  hsm_heap_t *heap = hsm_tls_heap;
  if (HSM_LIKELY(size < heap->fast_lim)) {
    size_t cls = heap->fast_class[size];
    hsm_page_t *pg = heap->fast_direct[cls];
    hsm_block_t *b = pg->free;
    if (HSM_LIKELY(b != NULL)) return leaf_pop(heap, pg, b, cls, size);
    return malloc_checked(size); /* the default mode (secure mode's fast_lim is 0) */
  }
  /* tail calls only, so that neither path pays for the other's stack frame; the mode
   * is the heap's secure_lim, 0 in the default mode (one compare with memory, where
   * the mode's flag took a load, a test and a jump more); the rest (default mode: a
   * request above 4 KiB) to malloc_big, which takes what it does not serve on to
   * malloc_checked (a heap without big hot classes, a thread without a heap among
   * them, at its first compare: 4 instructions more than straight there; the test
   * here instead cost the hot classes' route 3) */
  if (HSM_UNLIKELY(size < heap->secure_lim)) return malloc_secure(size, heap);
  return malloc_big(size, heap);
}

/* ::operator new(size_t) promises __STDCPP_DEFAULT_NEW_ALIGNMENT__ (16 on x86-64), and
 * clang relies on it (it may initialize the new object with movaps): the packed sizes
 * 16k+1 .. 16k+8 up to 120 take the 16-aligned class above, unless HSMALLOC_PACKED=all
 * (C++ built by GCC, which assumes nothing). The request is counted as made. */
void *hsm_new_malloc(size_t size) {
  if (hsm_packed_new) return hsm_packed_alloc(size);
  /* not a packed size, or malloc rounds it up to 16 itself (the default): its fast path */
  if (!hsm_malloc_packed || size - 17 >= 104 || ((size - 1) & 8) != 0) return hsm_malloc(size);
  return alloc_checked_sized((size + 15) & ~(size_t)15, size, 0);
}

/* The packed classes for new from code known to assume no more than 8-byte alignment
 * (module.c): malloc's own path when malloc takes them too, else the class of the size
 * as asked. */
void *hsm_packed_alloc(size_t size) {
  if (hsm_malloc_packed) return hsm_malloc(size);
  return alloc_checked_sized(size, size, 0);
}

void *hsm_calloc(size_t n, size_t size) {
  size_t total;
  if (HSM_UNLIKELY(__builtin_mul_overflow(n, size, &total))) {
    errno = ENOMEM;
    return NULL;
  }
  return alloc_checked(total, 1);
}

/* `align` is a power of two. Blocks of a class whose size is a multiple of `align`
 * are aligned already (pages start on 64 KiB); otherwise over-allocate and return an
 * aligned pointer inside the block (the page is flagged so free finds the start). */
void *hsm_memalign(size_t align, size_t size) {
  /* 16: a multiple of 16, so that no packed (8-byte aligned) class serves it */
  if (align <= HSM_MAX_ALIGN_SMALL)
    return hsm_malloc(align <= 8 || size > HSM_SMALL_MAX ? size : (size + 15) & ~(size_t)15);
  hsm_heap_t *heap = hsm_heap_get();
  if (heap == NULL) {
    errno = ENOMEM;
    return NULL;
  }
  if (HSM_UNLIKELY(heap->chain != NULL))
    return hsm_chain_memalign_default(heap->chain, align, size);
  /* (secure mode's blocks are 8 bytes longer than asked: the class of size says nothing;
   * over-allocation, below, serves it) */
  if (size <= HSM_SMALL_MAX && align <= HSM_SLICE_SIZE && !hsm_secure &&
      hsm_class_size[hsm_heap_class_of(heap, size)] % align == 0)
    return alloc_checked(size, 0);
  if (size > HSM_SMALL_MAX && size <= HSM_LARGE_MAX && align <= HSM_SLICE_SIZE && !hsm_secure) {
    /* a large block (64 KiB-aligned), whatever hot class serves the size */
    hsm_block_t *b = hsm_large_alloc(heap, size, 0);
    if (b == NULL) errno = ENOMEM;
    else b->mark = 0;
    return b;
  }
  size_t total;
  /* size + align - 16 (a 16-aligned block has an aligned address that far in), rounded
   * up to 16 so that no packed class (8-byte aligned) serves it */
  if (__builtin_add_overflow(size, align - 1, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  total &= ~(size_t)15;
  if (total > HSM_LARGE_MAX) {
    size_t dirty;
    void *p = hsm_huge_alloc(hsm_secure ? size + 8 : size, align, &dirty);
    if (p == NULL) {
      errno = ENOMEM;
      return NULL;
    }
    hsm_huge_t *h = hsm_huge_of(p, hsm_registry_kind(p));
    if (HSM_UNLIKELY(hsm_secure)) {
      h->requested = size;
      hsm_secure_seal_big(p, size);
    }
    HSM_COUNT(heap->stats.allocs[HSM_BIN_HUGE], 1);
    HSM_COUNT(heap->stats.alloc_bytes[HSM_BIN_HUGE], h->usable);
    HSM_COUNT(heap->stats.requested[HSM_BIN_HUGE], size);
    return p;
  }
  uint8_t *p = alloc_checked(total, 0);
  if (p == NULL) return NULL;
  uint8_t *q = (uint8_t *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
  if (q != p) {
    /* The block may come from this thread's cache of another heap's blocks, and other
     * threads read the flag to free blocks of the page: atomic accesses only. */
    hsm_page_t *pg = hsm_page_of(hsm_segment_of(p), p);
    if (!__atomic_load_n(&pg->flags.f.has_aligned, __ATOMIC_RELAXED))
      __atomic_store_n(&pg->flags.f.has_aligned, 1, __ATOMIC_RELAXED);
  }
  return q;
}

/* realloc(p, 0) frees and returns NULL, as glibc does. A block keeps its place when
 * the new size fits and uses at least half of it. */
void *hsm_realloc(void *p, size_t size) {
  if (p == NULL) return hsm_malloc(size);
  unsigned kind = hsm_registry_kind(p);
  if (HSM_UNLIKELY(hsm_is_chain_kind(kind))) { /* a chain's block stays in its chain */
    int done;
    void *q = hsm_chain_realloc_routed(p, size, kind, &done);
    if (done) return q;
  }
  if (size == 0) {
    hsm_free(p);
    return NULL;
  }
  hsm_heap_t *counted = hsm_tls_heap_or_null(); /* the spy's reallocation count */
  if (counted != NULL) HSM_COUNT(counted->stats.reallocs, 1);
  int ours = hsm_realloc_owned(p); /* a freed or stray pointer aborts, as free would */
  size_t usable = hsm_usable_size(p);
  void *q;
  if (HSM_UNLIKELY(hsm_secure) && ours) { /* the request is the usable size: see secure.c */
    if ((q = hsm_secure_resize(p, size)) != NULL) return q;
  } else if (ours && size <= usable && size >= usable / 2) {
    return p;
  }
  if (ours && !hsm_secure && size > HSM_SMALL_MAX && size <= HSM_LARGE_MAX &&
      (q = hsm_large_resize(p, size)))
    return q;
  if (ours && !hsm_secure && usable > HSM_LARGE_MAX) { /* a huge block: its pages move */
    if (size > usable && (q = hsm_huge_grow(p, size)) != NULL) return q;
    if (size > HSM_LARGE_MAX && size <= usable && hsm_huge_shrink(p, size)) return p;
  }
  q = hsm_malloc(size);
  if (q == NULL) return NULL;
  memcpy(q, p, size < usable ? size : usable);
  if (ours) hsm_free(p);
  else hsm_foreign_free(p);
  return q;
}

#ifndef HSMALLOC_NO_OVERRIDE
HSM_ALIAS(malloc, hsm_malloc);
HSM_ALIAS(__libc_malloc, hsm_malloc);
HSM_ALIAS(calloc, hsm_calloc);
HSM_ALIAS(__libc_calloc, hsm_calloc);
HSM_ALIAS(realloc, hsm_realloc);
HSM_ALIAS(__libc_realloc, hsm_realloc);
#endif
