/* Freeing: free's fast path (every small block onto the freeing thread's cache for its
 * class, whichever heap owns it), huge blocks, pointers we do not own; and the size
 * and ownership of a pointer. free's glibc names are aliases defined here
 * (an alias must live beside its target). */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "internal.h"

/* A pointer inside a huge block's first 2 MiB unit is not its start. */
static hsm_huge_t *checked_huge(void *p, unsigned kind, const char *fn) {
  hsm_huge_t *h = hsm_huge_of(p, kind);
  if (HSM_UNLIKELY(h->magic != HSM_HUGE_MAGIC || h->block != (uint8_t *)p)) hsm_bad_free(fn, p);
  if (HSM_UNLIKELY(hsm_secure)) hsm_secure_unseal_big(fn, p, p, h->requested);
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

/* The fast path's check turned p away: a block of a large page or a secure-mode one, or
 * of a page not in use (their bound on the first line is 0), an aligned block's
 * interior, a block marked free; the generic path's checks tell the misuses (one line
 * and abort) from the rest. */
static __attribute__((noinline)) void free_rejected(hsm_page_t *pg, void *p, uint64_t v) {
  /* secure mode's every free: a block start of a small page in use is secure.c's (only
   * a secure-mode page in use has f.secure set, hsm_segment_page_free clears it: the
   * flags alone tell the mode and the use); the rest the generic path's */
  if (HSM_LIKELY(__atomic_load_n(&pg->flags.any, __ATOMIC_RELAXED) == HSM_FLAGS_SECURE_ONLY) &&
      v < hsm_carved_limit(pg)) { /* hsm_block_ok, its index computed by free_block */
    hsm_secure_free(pg, p);
    return;
  }
  hsm_heap_t *heap = hsm_tls_heap;
  hsm_page_free_generic(heap == &hsm_heap_empty ? NULL : heap, pg, p);
}

/* Secure mode's free of b (a carved block start of secure page pg, in use) that
 * hsm_secure_free did not finish: a double free, a canary overwritten, or a thread
 * without a heap go through the generic path (whose checks abort with the message), a
 * full cache is flushed, then b pushed. */
__attribute__((noinline)) void hsm_secure_free_slow(hsm_page_t *pg, hsm_block_t *b) {
  hsm_heap_t *heap = hsm_tls_heap;
  if (heap == &hsm_heap_empty || b->mark == hsm_secure_mark(b) ||
      !hsm_canary_ok(b, pg->block_size)) {
    hsm_page_free_generic(heap == &hsm_heap_empty ? NULL : heap, pg, b);
    return;
  }
  b->mark = hsm_secure_mark(b);
  HSM_COUNT(heap->cache[pg->class_id].frees, 1);
  hsm_cache_overflow(heap, pg, b);
}

/* The cache of b's class has no room (or the thread has no heap: hsm_heap_empty's
 * caches have none, and nothing is ever pushed there): flushed, then b goes on. */
static __attribute__((noinline)) void free_full(hsm_page_t *pg, hsm_block_t *b) {
  hsm_heap_t *heap = hsm_tls_heap;
  if (heap == &hsm_heap_empty) {
    hsm_page_free_generic(NULL, pg, b);
    return;
  }
  b->mark = (uintptr_t)pg;
  HSM_COUNT(heap->cache[pg->class_id].frees, 1);
  hsm_cache_overflow(heap, pg, b);
}

/* A small block of page pg onto this thread's cache for its class, whichever heap owns
 * it: a block start among the page's carved blocks (its bound read off the page's
 * first line, 0 for a page whose frees must take the slow path) and not free already
 * (its mark is the page), then the room test, the push and the count. No owner test:
 * the cache sends other heaps' blocks home when it is flushed (cache.c). */
static inline __attribute__((always_inline)) void free_block(hsm_page_t *pg, void *p) {
  hsm_block_t *b = p;
  uint64_t v = hsm_block_index(pg, p);
  if (HSM_UNLIKELY(!hsm_block_ok_free(pg, v) || b->mark == (uintptr_t)pg)) {
    free_rejected(pg, p, v); /* a tail call: the fast path keeps no stack frame */
    return;
  }
  hsm_page_t *cache = (hsm_page_t *)((uint8_t *)hsm_tls_heap + pg->cache_off);
  if (HSM_UNLIKELY(hsm_room_le1(&cache->used))) { /* before any write: see free_full */
    free_full(pg, b);
    return;
  }
  b->mark = (uintptr_t)pg; /* also tells calloc the block is not fresh (hsm_page_pop) */
  b->next = cache->free;   /* LIFO: reused next, still in cache */
  cache->free = b;
  HSM_COUNT(cache->frees, 1);
}

/* A pointer into a segment that also holds a chain's buffer, not a chain block. */
static __attribute__((noinline)) void free_in_segment(void *p) {
  free_block(hsm_page_of(hsm_segment_of(p), p), p);
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
      free_in_segment(p);
      return;
    }
  }
  if (kind != HSM_REG_NONE) huge_free_counted(p, kind);
  else if (p != NULL) free_foreign(p);
}

/* The fast path: a small block (one registry compare, the page, free_block), given the
 * pointer's 2 MiB unit and its 64 KiB slice q (bits 21-46 and 16-46: a pointer above the
 * 47 bits of user space, never one of ours, is read as one below: where that is a
 * segment, the block-start check rejects it, or, some of bits 58-63 set, it faults on
 * the mark's read, before anything is written; NULL is unit 0, never ours). q's low
 * bits are the unit's colour and the slice: the index into the segment's rows of slice
 * tables (structs.h) of its colour's row, with no mask but the byte's. */
_Static_assert(HSM_SLICES << HSM_SLICE_SHIFT == HSM_SEGMENT_SIZE, "q's low bits: unit, slice");
_Static_assert(HSM_SLICE_COLORS *HSM_SLICES == 256, "a colour and a slice are q's low byte");
static inline __attribute__((always_inline)) void free_fast(void *p, uintptr_t q, uintptr_t unit) {
  if (HSM_LIKELY(hsm_byte_eq(hsm_registry, unit, HSM_REG_SEGMENT))) {
    uintptr_t table = (unit << HSM_SEGMENT_SHIFT) + offsetof(hsm_segment_t, slice_color);
    free_block(*(hsm_page_t **)(table + (uint8_t)q * sizeof(hsm_page_t *)), p);
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
  if (kind == HSM_REG_NONE) return hsm_foreign_usable_size((void *)p);
  if (HSM_UNLIKELY(hsm_secure)) return hsm_secure_usable(p, kind);
  if (kind == HSM_REG_SEGMENT) {
    hsm_page_t *pg = hsm_page_of(hsm_segment_of(p), p);
    if (!__atomic_load_n(&pg->flags.f.has_aligned, __ATOMIC_RELAXED)) return pg->block_size;
    const uint8_t *b = (const uint8_t *)hsm_block_start(pg, p);
    return (size_t)(b + pg->block_size - (const uint8_t *)p);
  }
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
