/* Freeing: free's fast paths (a block of this thread's heap; another heap's small
 * block kept in this thread's cache), huge blocks, pointers we do not own; and the
 * size and ownership of a pointer. free's glibc names are aliases defined here
 * (an alias must live beside its target). */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "internal.h"

/* A pointer inside a huge block's first 2 MiB unit is not its start. */
static hsm_huge_t *checked_huge(void *p, unsigned kind, const char *fn) {
  hsm_huge_t *h = hsm_huge_of(p, kind);
  if (HSM_UNLIKELY(h->magic != HSM_HUGE_MAGIC || h->block != (uint8_t *)p)) hsm_bad_free(fn, p);
  return h;
}

static void huge_free_counted(void *p, unsigned kind) {
  hsm_huge_t *h = checked_huge(p, kind, "free");
  hsm_heap_t *heap = hsm_heap_for_free();
  if (heap != NULL) {
    HSM_COUNT(heap->stats.frees[HSM_BIN_HUGE], 1);
    HSM_COUNT(heap->stats.free_bytes[HSM_BIN_HUGE], h->usable);
  } else {
    atomic_fetch_add_explicit(&hsm_gstats.orphan_frees, 1, memory_order_relaxed);
  }
  hsm_huge_free(h);
}

/* Not a block start among those carved (pg->limit: a pointer beyond the reserved limit
 * is beyond it too), or a free block. */
static __attribute__((noinline, cold)) void free_rejected(hsm_page_t *pg, void *p) {
  if (!hsm_block_ok(pg, p, pg->limit)) hsm_bad_free("free", p);
  hsm_double_free("free", p);
}

/* The same for another heap's block: beyond the page's carved blocks as other threads
 * read them (remote_limit: 0 once the page went back to its segment), or a free block. */
static __attribute__((noinline, cold)) void free_rejected_other(hsm_page_t *pg, void *p) {
  if (!hsm_block_ok(pg, p, hsm_remote_limit(pg))) hsm_bad_free("free", p);
  hsm_double_free("free", p);
}

/* Secure mode, a block of this thread's heap: free's fast path with the list link and
 * the free mark encoded with the page's key. */
static __attribute__((noinline)) void free_secure_own(hsm_heap_t *heap, hsm_page_t *pg, void *p) {
  hsm_block_t *b = p;
  if (HSM_UNLIKELY(!hsm_block_ok(pg, p, pg->limit))) hsm_bad_free("free", p);
  if (HSM_UNLIKELY(b->mark == hsm_mark(pg))) hsm_double_free("free", p);
  b->mark = hsm_mark(pg);
  b->next = hsm_link(pg, pg->free);
  pg->free = b;
  pg->free_is_zero = 0;
  HSM_COUNT(heap->stats.frees[pg->class_id], 1);
  if (HSM_UNLIKELY(hsm_dec_le0(&pg->used))) hsm_page_after_free(heap, pg);
}

/* What every block put on this thread's cache of other heaps' blocks counts: a free, a
 * remote free, and one push of the cache's budget (sent home at 0, remote.c). */
static inline __attribute__((always_inline)) void cache_counted(hsm_heap_t *heap, size_t cls) {
  HSM_COUNT(heap->stats.frees[cls], 1);
  HSM_COUNT(heap->stats.remote_frees, 1);
  if (HSM_UNLIKELY(--heap->cache_left[cls] == 0)) hsm_cache_overflow(heap, cls);
}

/* The first block of another heap onto this thread's empty cache for its class: the
 * class's allocations take from the cache from now on (while it holds blocks, direct
 * points to it: set here, by page.c's generic free and by hsm_page_alloc_slow). The
 * cache's owner (cache->heap) is the block's, its tail (cache->local_free) the block:
 * remote.c. A thread without a heap (hsm_heap_empty, whose caches stay
 * empty) frees through the generic path. */
static __attribute__((noinline)) void free_to_empty_cache(hsm_heap_t *heap, hsm_page_t *pg,
                                                          hsm_block_t *b) {
  if (heap == &hsm_heap_empty) {
    hsm_page_free_generic(NULL, pg, b);
    return;
  }
  size_t cls = pg->class_id;
  hsm_page_t *cache = &heap->cache[cls];
  b->mark = (uintptr_t)pg;
  b->next = NULL;
  cache->free = b;
  cache->heap = pg->heap;
  cache->local_free = b;
  if (heap->direct[cls] != cache) hsm_direct_set(heap, cls, cache);
  cache_counted(heap, cls);
}

/* A page without flags whose heap is not the one of the blocks on this thread's cache
 * for the class: ours (the generic path), or another heap's block onto the cache, which
 * from now on holds more than one heap's blocks (no tail: the flush looks their owners
 * up), or onto the empty cache. */
static __attribute__((noinline)) void free_other_owner(hsm_page_t *pg, void *p, hsm_heap_t *heap) {
  if (pg->heap == heap || heap == &hsm_heap_empty) {
    hsm_page_free_generic(heap == &hsm_heap_empty ? NULL : heap, pg, p);
    return;
  }
  hsm_block_t *b = p;
  if (HSM_UNLIKELY(!hsm_block_ok(pg, p, hsm_remote_limit(pg)) || b->mark == (uintptr_t)pg)) {
    free_rejected_other(pg, p);
    return;
  }
  size_t cls = pg->class_id;
  hsm_page_t *cache = &heap->cache[cls];
  if (cache->free == NULL) {
    free_to_empty_cache(heap, pg, b);
    return;
  }
  b->mark = (uintptr_t)pg;
  b->next = cache->free;
  cache->free = b;
  cache->heap = pg->heap;
  cache->local_free = NULL;
  cache_counted(heap, cls);
}

/* Another heap's block (or a flagged page of ours): a small block of the heap whose
 * blocks this thread's cache for the class holds goes onto it (its owner compared first:
 * the cache never holds this heap's blocks, so "not ours" needs no test of its own);
 * anything else takes the paths above or the generic one. Out of line so that free's
 * own fast path needs no saved register. The cache's budget counts down (one
 * instruction to test), and its first block takes the path above. */
static __attribute__((noinline)) void free_other(hsm_page_t *pg, void *p, hsm_heap_t *heap) {
  if (HSM_LIKELY(__atomic_load_n(&pg->flags.any, __ATOMIC_RELAXED) == 0)) {
    size_t cls = pg->class_id;
    hsm_page_t *cache = &heap->cache[cls];
    if (HSM_UNLIKELY(pg->heap != cache->heap)) {
      free_other_owner(pg, p, heap);
      return;
    }
    /* (a page not in use has a remote limit of 0: no pointer passes) */
    hsm_block_t *b = p;
    if (HSM_UNLIKELY(!hsm_block_ok(pg, p, hsm_remote_limit(pg)) || b->mark == (uintptr_t)pg)) {
      free_rejected_other(pg, p); /* a tail call: this path keeps no stack frame */
      return;
    }
    hsm_block_t *top = cache->free;
    if (HSM_UNLIKELY(top == NULL)) {
      free_to_empty_cache(heap, pg, b);
      return;
    }
    b->mark = (uintptr_t)pg; /* no flag: not a secure page, its key is 0 */
    b->next = top;
    cache->free = b;
    cache_counted(heap, cls);
    return;
  }
  if (pg->heap == heap &&
      __atomic_load_n(&pg->flags.any, __ATOMIC_RELAXED) == HSM_FLAGS_SECURE_ONLY) {
    free_secure_own(heap, pg, p);
    return;
  }
  hsm_page_free_generic(heap == &hsm_heap_empty ? NULL : heap, pg, p);
}

static int on_this_threads_stack(const void *p) {
  pthread_attr_t attr;
  void *base;
  size_t size;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
  int got = pthread_attr_getstack(&attr, &base, &size) == 0;
  pthread_attr_destroy(&attr);
  return got && (const uint8_t *)p >= (uint8_t *)base &&
         (const uint8_t *)p < (uint8_t *)base + size;
}

/* Not in any of our segments or huge blocks: glibc's block (a library bound to glibc's
 * malloc), unless it lies in a loaded object (a global) or on this thread's stack,
 * which no allocator handed out. Rare, so the look-ups cost nothing that matters. */
static void free_foreign(void *p) {
  Dl_info info;
  if (dladdr(p, &info) != 0)
    hsm_fatal("free", p,
              "an address inside a loaded program or library (a global), not a heap block");
  if (on_this_threads_stack(p))
    hsm_fatal("free", p, "an address on this thread's stack, not a heap block");
  hsm_foreign_free(p);
}

/* (The kind is read here again, so that free's fast path keeps nothing for this.) */
static __attribute__((noinline)) void free_outside_segments(void *p) {
  unsigned kind = hsm_registry_kind(p);
  if (HSM_UNLIKELY(hsm_is_chain_kind(kind))) { /* a chain's unit (chain_api.c) */
    kind = hsm_chain_free_routed(p, kind);
    if (kind == HSM_REG_CHAIN_BLOCK) return;
    if (kind == HSM_REG_SEGMENT) { /* a segment that also holds a chain's buffer */
      free_other(hsm_page_of(hsm_segment_of(p), p), p, hsm_tls_heap);
      return;
    }
  }
  if (kind != HSM_REG_NONE) huge_free_counted(p, kind);
  else if (p != NULL) free_foreign(p);
}

/* unit * (segment size - the slice table's bytes), as one multiplication: the compiler
 * would make it shifts and a subtraction (four instructions) */
#define TABLE_STEP (HSM_SEGMENT_SIZE - HSM_SLICES * sizeof(hsm_page_t *))
static inline __attribute__((always_inline)) uintptr_t imul_const(uintptr_t unit) {
#if defined(__x86_64__)
  uintptr_t t;
  __asm__("imulq %2, %1, %0" : "=r"(t) : "r"(unit), "i"(TABLE_STEP));
  return t;
#else
  return unit * TABLE_STEP;
#endif
}

/* The fast path: our own small block (one registry compare, the page, the owner and
 * flags in one compare with the thread pointer, the two checks, a push, the page's
 * counters of frees and of blocks out), given
 * the pointer's 2 MiB unit and its 64 KiB slice q (bits 21-46 and 16-46: a pointer
 * above the 47 bits of user space, never one of ours, is read as one below: where that
 * is a segment, the block-start check rejects it, or, some of bits 58-63 set, it faults
 * on the mark's read below, before anything is written; NULL is unit 0, never ours). */
static inline __attribute__((always_inline)) void free_fast(void *p, uintptr_t q, uintptr_t unit) {
  if (HSM_LIKELY(hsm_byte_eq(hsm_registry, unit, HSM_REG_SEGMENT))) {
    /* the segment's slice table indexed by q itself: its base moved back by the
     * entries of q's bits above the slice (one multiplication, no mask nor shift) */
    uintptr_t table = imul_const(unit) + offsetof(hsm_segment_t, slice_page);
    hsm_page_t *pg = *(hsm_page_t **)(table + q * sizeof(hsm_page_t *));
    if (HSM_LIKELY(hsm_ptr_eq((void *const *)&pg->fast_owner, hsm_thread_self()))) {
      /* our own block, no flag (so the page's key is 0): a block start among those
       * carved, and not free already (its mark is the page) */
      hsm_block_t *b = p;
      if (HSM_UNLIKELY(!hsm_block_ok(pg, p, pg->limit) || b->mark == (uintptr_t)pg)) {
        free_rejected(pg, p); /* a tail call: the fast path keeps no stack frame */
        return;
      }
      b->mark = (uintptr_t)pg; /* also tells calloc the block is not fresh (hsm_page_pop) */
      b->next = pg->free;      /* LIFO: reused next, still in cache */
      pg->free = b;
      HSM_COUNT(pg->frees, 1); /* into the heap's frees[class] later (page.c) */
      /* the page became empty, or it was parked full (HSM_USED_FULL); the page's heap
       * is this thread's (its fast owner) */
      if (HSM_UNLIKELY(hsm_dec_le0(&pg->used))) hsm_page_after_free(pg->heap, pg);
      return;
    }
    free_other(pg, p, hsm_tls_heap);
    return;
  }
  free_outside_segments(p);
}

/* The pointer's top 17 bits shifted out by a multiplication by 2^17: an imul with an
 * immediate keeps p in its register (a shift would need a copy first, one instruction
 * more), at two cycles of latency more than mov and shl. */
static inline __attribute__((always_inline)) uintptr_t low_bits_up(const void *p) {
#if defined(__x86_64__)
  uintptr_t t;
  __asm__("imulq %2, %1, %0" : "=r"(t) : "r"(p), "i"((uintptr_t)1 << (64 - HSM_ADDRESS_BITS)));
  return t;
#else
  return (uintptr_t)p << (64 - HSM_ADDRESS_BITS);
#endif
}

void hsm_free(void *p) {
  uintptr_t q = low_bits_up(p) >> (64 - HSM_ADDRESS_BITS + HSM_SLICE_SHIFT);
  free_fast(p, q, q >> (HSM_SEGMENT_SHIFT - HSM_SLICE_SHIFT));
}

size_t hsm_usable_size(const void *p) {
  if (p == NULL) return 0;
  unsigned kind = hsm_registry_kind(p);
  if (HSM_UNLIKELY(hsm_is_chain_kind(kind))) {
    size_t usable = hsm_chain_usable_routed(p, &kind);
    if (kind == HSM_REG_CHAIN_BLOCK) return usable;
  }
  if (kind == HSM_REG_SEGMENT) {
    hsm_page_t *pg = hsm_page_of(hsm_segment_of(p), p);
    if (!__atomic_load_n(&pg->flags.f.has_aligned, __ATOMIC_RELAXED)) return pg->block_size;
    const uint8_t *b = (const uint8_t *)hsm_block_start(pg, p);
    return (size_t)(b + pg->block_size - (const uint8_t *)p);
  }
  if (kind == HSM_REG_NONE) return hsm_foreign_usable_size((void *)p);
  hsm_huge_t *h = hsm_huge_of(p, kind);
  return (size_t)(h->block + h->usable - (const uint8_t *)p);
}

/* Whether realloc's pointer is ours (hsm_owns), having passed free's checks before its
 * contents are used (a chain's unit: the checks of what the rest of the unit is). */
int hsm_realloc_owned(void *p) {
  unsigned kind = hsm_registry_kind(p);
  if (HSM_UNLIKELY(hsm_is_chain_kind(kind))) (void)hsm_chain_usable_routed(p, &kind);
  if (kind == HSM_REG_NONE) return 0;
  if (kind == HSM_REG_SEGMENT)
    (void)hsm_checked_block(hsm_page_of(hsm_segment_of(p), p), p, "realloc");
  else if (kind != HSM_REG_CHAIN_BLOCK) (void)checked_huge(p, kind, "realloc");
  return 1;
}

int hsm_owns(const void *p) {
  if (p == NULL) return 0;
  unsigned kind = hsm_registry_kind(p);
  if (HSM_UNLIKELY(hsm_is_chain_kind(kind))) (void)hsm_chain_usable_routed(p, &kind);
  return kind != HSM_REG_NONE;
}

#ifndef HSMALLOC_NO_OVERRIDE
HSM_ALIAS(free, hsm_free);
HSM_ALIAS(__libc_free, hsm_free);
HSM_ALIAS(cfree, hsm_free);
#endif
/* The two operator deletes a program may replace and no other variant's default calls
 * (plain and aligned): free itself, as aliases they cost no jump (x86-64 passes the
 * pointer first, the alignment is the page's to know). The other ten, whose standard
 * default calls one of these, are in cxx.c: they go on to the program's replacement
 * when there is one. Exported also with HSMALLOC_NO_OVERRIDE, as operator new is. */
HSM_ALIAS(_ZdlPv, hsm_free);
HSM_ALIAS(_ZdlPvSt11align_val_t, hsm_free);
