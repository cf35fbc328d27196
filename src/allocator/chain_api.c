/* Chains' entry points (hsmalloc.h): argument checks, who may call (the owner of an
 * unshared chain; anyone, under the lock, for a shared one), the default-chain
 * switch, and the routes by which free(), realloc() and malloc_usable_size() reach
 * a chain's blocks (called from free.c and alloc.c off their fast paths). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain.h"

/* ---- misuse: one line, then abort ---- */

static size_t put(char *out, size_t at, const char *s) {
  while (*s && at < 255) out[at++] = *s++;
  return at;
}

static size_t put_ptr(char *out, size_t at, const void *p) {
  char hex[19] = "0x";
  uintptr_t v = (uintptr_t)p;
  int n = 0;
  char digits[16];
  do {
    digits[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v && n < 16);
  for (int i = 0; i < n; i++) hex[2 + i] = digits[n - 1 - i];
  hex[2 + n] = 0;
  return put(out, at, hex);
}

/* Written with write(2): the allocator may be what is broken. */
void hsm_chain_die(const char *what, const void *a, const void *b) {
  char line[256];
  size_t at = put(line, 0, "hsmalloc: ");
  at = put(line, at, what);
  if (a) at = put_ptr(line, put(line, at, " ("), a);
  if (b) at = put_ptr(line, put(line, at, a ? ", chain " : " (chain "), b);
  if (a || b) at = put(line, at, ")");
  at = put(line, at, "\n");
  ssize_t ignored = write(2, line, at);
  (void)ignored;
  abort();
}

/* ---- who may call ---- */

static __attribute__((noinline, noreturn)) void die_in(const char *fn, const char *why,
                                                       const void *p, const void *c) {
  char what[256];
  size_t at = put(what, put(what, 0, fn), why);
  what[at] = 0;
  hsm_chain_die(what, p, c);
}

static __attribute__((noinline, noreturn)) void wrong_caller(hsmalloc_chain_t *c, const char *fn) {
  if (c->magic != HSM_CHAIN_MAGIC)
    die_in(fn, ": not a chain (destroyed, or never created)", NULL, c);
  die_in(fn, ": the chain is not shared and this thread is not its owner", NULL, c);
}

/* 1 when the lock was taken (a shared chain), 0 for the owner; aborts otherwise. */
static inline int enter(hsmalloc_chain_t *c, const char *fn) {
  if (HSM_LIKELY(c->owner == hsm_chain_self())) return 0;
  if (c->owner != HSM_CHAIN_SHARED_OWNER || c->magic != HSM_CHAIN_MAGIC) wrong_caller(c, fn);
  pthread_mutex_lock(&c->lock);
  return 1;
}

static inline void leave(hsmalloc_chain_t *c, int locked) {
  if (locked) pthread_mutex_unlock(&c->lock);
}

static void check_magic(hsmalloc_chain_t *c, const char *fn) {
  if (c->magic != HSM_CHAIN_MAGIC) wrong_caller(c, fn);
}

/* ---- blocks, whoever frees them ---- */

/* An unshared chain's block freed by another thread waits on the remote stack. */
static inline void free_in(hsmalloc_chain_t *c, hsm_cregion_t *r, void *p) {
  if (HSM_LIKELY(c->owner == hsm_chain_self())) {
    hsm_chain_free_fast(c, r, p);
  } else if (c->owner == HSM_CHAIN_SHARED_OWNER) {
    pthread_mutex_lock(&c->lock);
    hsm_chain_free_block(c, r, p);
    pthread_mutex_unlock(&c->lock);
  } else {
    unsigned cls;
    size_t bsize;
    hsm_block_t *b = (hsm_block_t *)hsm_chain_block_of(r, p, &cls, &bsize);
    hsm_block_t *old = atomic_load_explicit(&c->remote, memory_order_relaxed);
    do {
      b->next = old;
    } while (!atomic_compare_exchange_weak_explicit(&c->remote, &old, b, memory_order_release,
                                                    memory_order_relaxed));
  }
}

static void *alloc_locked(hsmalloc_chain_t *c, size_t size, int packed, const char *fn) {
  int locked = enter(c, fn);
  void *p = hsm_chain_alloc_fast(c, size, packed);
  leave(c, locked);
  if (HSM_UNLIKELY(p == NULL)) errno = ENOMEM;
  return p;
}

static void *aligned_in(hsmalloc_chain_t *c, size_t align, size_t size, const char *fn) {
  if (align <= 8) return alloc_locked(c, size, 1, fn);
  if (align <= HSM_MAX_ALIGN_SMALL) return alloc_locked(c, size < 16 ? 16 : size, 0, fn);
  size_t total;
  if (__builtin_add_overflow(size, align - HSM_MAX_ALIGN_SMALL, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  int locked = enter(c, fn);
  uint8_t *p = hsm_chain_alloc(c, total, 0);
  uint8_t *q = (uint8_t *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
  if (p != NULL && q != p) {
    unsigned prior;
    hsm_chain_mark_aligned(hsm_chain_region_of(p, hsm_registry_kind(p), &prior), p);
  }
  leave(c, locked);
  if (p == NULL) errno = ENOMEM;
  return p ? q : NULL;
}

/* realloc of block p (of region r of chain c): in place when the new size fits and
 * uses at least half; otherwise a new block of the same chain, or NULL and ENOMEM
 * (p untouched). */
static void *realloc_in(hsmalloc_chain_t *c, hsm_cregion_t *r, void *p, size_t size, int packed,
                        const char *fn) {
  if (size == 0) {
    free_in(c, r, p);
    return NULL;
  }
  size_t usable = hsm_chain_usable(r, p);
  if (size <= usable && size >= usable / 2) return p;
  void *q = alloc_locked(c, size, packed, fn);
  if (q == NULL) return NULL;
  memcpy(q, p, size < usable ? size : usable);
  HSM_COUNT(c->reallocs, 1);
  free_in(c, r, p);
  return q;
}

static inline hsm_cregion_t *region_in(hsmalloc_chain_t *c, void *p, const char *fn) {
  unsigned kind = hsm_registry_kind(p), prior;
  hsm_cregion_t *r = kind == HSM_REG_CHAIN_SEG || kind == HSM_REG_CHAIN_MAP
                         ? hsm_chain_region_fast(p, kind, &prior)
                         : NULL;
  if (HSM_UNLIKELY(r == NULL)) die_in(fn, ": not a block of any chain", p, c);
  if (HSM_UNLIKELY(r->chain != c)) die_in(fn, ": the block belongs to another chain", p, c);
  return r;
}

/* ---- the public API ---- */

HSM_EXPORT hsmalloc_chain_t *hsmalloc_chain_create(void *buf, size_t size, unsigned flags) {
  if ((flags & ~(unsigned)HSM_CHAIN_FLAGS_KNOWN) != 0 ||
      (buf != NULL && ((uintptr_t)buf % HSM_CHAIN_BUF_ALIGN != 0 || size == 0 ||
                       (uintptr_t)buf + size < (uintptr_t)buf))) {
    errno = EINVAL;
    return NULL;
  }
  (void)hsm_heap_get(); /* the allocator is initialized (size classes) */
  int err = 0;
  hsmalloc_chain_t *c = hsm_chain_new(buf, size, flags, &err);
  if (c == NULL) errno = err;
  return c;
}

static __attribute__((noinline)) void *chain_malloc_slow(hsmalloc_chain_t *c, size_t size) {
  if (c == NULL) return hsm_malloc(size);
  return alloc_locked(c, size, 1, "hsmalloc_chain_malloc");
}

/* The fast path is a leaf without a stack frame, as malloc's: the owner, the class
 * from the table (sizes above it, whose class is computed, take the slow path), a
 * recycled block or the next one of the class's span, two counters. */
HSM_EXPORT void *hsmalloc_chain_malloc(hsmalloc_chain_t *c, size_t size) {
  void *p;
  if (HSM_LIKELY(c != NULL && size <= HSM_CLASS_TABLE_MAX && c->owner == hsm_chain_self()) &&
      HSM_LIKELY(hsm_chain_take(c, hsm_class_table[(size + 7) >> 3], size, &p)))
    return p;
  return chain_malloc_slow(c, size);
}

HSM_EXPORT void *hsmalloc_chain_calloc(hsmalloc_chain_t *c, size_t n, size_t size) {
  if (c == NULL) return hsm_calloc(n, size);
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  void *p = alloc_locked(c, total, 1, "hsmalloc_chain_calloc");
  if (p != NULL) memset(p, 0, total);
  return p;
}

HSM_EXPORT void *hsmalloc_chain_aligned_alloc(hsmalloc_chain_t *c, size_t align, size_t size) {
  if (!hsm_is_pow2(align)) {
    errno = EINVAL;
    return NULL;
  }
  if (c == NULL) return hsm_memalign(align, size);
  return aligned_in(c, align, size, "hsmalloc_chain_aligned_alloc");
}

HSM_EXPORT void *hsmalloc_chain_realloc(hsmalloc_chain_t *c, void *p, size_t size) {
  if (c == NULL) return hsm_realloc(p, size);
  if (p == NULL) return alloc_locked(c, size, 1, "hsmalloc_chain_realloc");
  hsm_cregion_t *r = region_in(c, p, "hsmalloc_chain_realloc");
  return realloc_in(c, r, p, size, 1, "hsmalloc_chain_realloc");
}

static __attribute__((noinline)) void chain_free_slow(hsmalloc_chain_t *c, void *p) {
  if (p == NULL) return;
  if (c == NULL) {
    hsm_free(p);
    return;
  }
  free_in(c, region_in(c, p, "hsmalloc_chain_free"), p);
}

/* The fast path is a leaf: a small block (not handed out inside) of the owner's chain
 * in one of its OS segments goes on its class's list. */
HSM_EXPORT void hsmalloc_chain_free(hsmalloc_chain_t *c, void *p) {
  if (HSM_LIKELY(hsm_registry_kind(p) == HSM_REG_CHAIN_SEG)) { /* (NULL: unit 0, none) */
    hsm_cregion_t *r = (hsm_cregion_t *)((uintptr_t)p & ~(uintptr_t)HSM_SEGMENT_MASK);
    /* one compare for base <= p < end: below base, the page number wraps above npages */
    size_t page = (size_t)((uint8_t *)p - r->base) >> HSM_CHAIN_PAGE_SHIFT;
    if (HSM_LIKELY(r->chain == c && page < r->npages && c->owner == hsm_chain_self())) {
      size_t cls = r->span[page] & 0x1FF; /* the class, and the aligned flag (every page) */
      if (HSM_LIKELY(cls < HSM_CHAIN_CLASSES)) {
        hsm_block_t *b = p;
        b->next = c->free[cls];
        c->free[cls] = b;
        HSM_COUNT(c->frees[cls], 1);
        return;
      }
    }
  }
  chain_free_slow(c, p);
}

HSM_EXPORT void hsmalloc_chain_reset(hsmalloc_chain_t *c) {
  if (c == NULL) return;
  int locked = enter(c, "hsmalloc_chain_reset");
  hsm_chain_clear(c);
  leave(c, locked);
}

/* ---- the default-chain switch ---- */

/* While a chain is the heap's default, its fast_direct holds only the empty page, so malloc's fast path falls through to the generic path, which asks the chain
 * (alloc.c). Frees of the heap's own
 * blocks are not affected. */
static void heap_switch(hsm_heap_t *heap, hsmalloc_chain_t *c) {
  hsmalloc_chain_t *prev = heap->chain;
  if (prev == c) return;
  if (prev) atomic_fetch_sub(&prev->defaults, 1);
  if (c) atomic_fetch_add(&c->defaults, 1);
  heap->chain = c;
  hsm_site_lanes_update(heap); /* a default chain serves operator new too */
  if ((c == NULL) != (prev == NULL)) hsm_fast_direct_refresh(heap);
}

HSM_EXPORT hsmalloc_chain_t *hsmalloc_chain_set_default(hsmalloc_chain_t *c) {
  if (c != NULL) {
    check_magic(c, "hsmalloc_chain_set_default");
    if (c->owner != HSM_CHAIN_SHARED_OWNER && c->owner != hsm_chain_self())
      wrong_caller(c, "hsmalloc_chain_set_default");
  }
  hsm_heap_t *heap = hsm_heap_get();
  if (heap == NULL) {
    errno = ENOMEM;
    return NULL;
  }
  hsmalloc_chain_t *prev = heap->chain;
  heap_switch(heap, c);
  return prev;
}

void hsm_chain_thread_exit(hsm_heap_t *heap) { heap_switch(heap, NULL); }

HSM_EXPORT void hsmalloc_chain_destroy(hsmalloc_chain_t *c) {
  if (c == NULL) return;
  check_magic(c, "hsmalloc_chain_destroy");
  hsm_heap_t *heap = hsm_tls_heap_or_null();
  if (heap != NULL && heap->chain == c) heap_switch(heap, NULL);
  if (atomic_load(&c->defaults) != 0)
    hsm_chain_die("hsmalloc_chain_destroy: the chain is another thread's default", NULL, c);
  hsm_chain_release(c);
}

HSM_EXPORT int hsmalloc_chain_stats(hsmalloc_chain_t *c, hsmalloc_stats_t *out) {
  if (out == NULL) {
    errno = EINVAL;
    return -1;
  }
  if (c == NULL) return hsmalloc_stats_get(out);
  check_magic(c, "hsmalloc_chain_stats");
  int locked = c->owner == HSM_CHAIN_SHARED_OWNER;
  if (locked) pthread_mutex_lock(&c->lock);
  hsm_chain_fill_stats(c, out);
  leave(c, locked);
  return 0;
}

/* The node is recorded first, so that regions mapped from now on are placed on it;
 * on an mbind failure the previous node is recorded again. */
HSM_EXPORT int hsmalloc_chain_bind_node(hsmalloc_chain_t *c, int node) {
  if (c == NULL || node < -1 || node >= hsm_numa_nodes()) {
    errno = EINVAL;
    return -1;
  }
  int locked = enter(c, "hsmalloc_chain_bind_node");
  int before = c->numa_node, rc = 0;
  c->numa_node = node;
  for (hsm_cregion_t *r = c->regions; r != NULL && rc == 0; r = r->next)
    rc = hsm_chain_region_bind(c, r);
  if (rc != 0) {
    c->numa_node = before;
    for (hsm_cregion_t *r = c->regions; r != NULL; r = r->next) (void)hsm_chain_region_bind(c, r);
  }
  leave(c, locked);
  if (rc != 0) errno = -rc;
  return rc == 0 ? 0 : -1;
}

/* ---- the routes from the glibc API (free.c, alloc.c) ---- */

unsigned hsm_chain_free_routed(void *p, unsigned kind) {
  unsigned prior;
  hsm_cregion_t *r = hsm_chain_region_fast(p, kind, &prior);
  if (r == NULL) return prior;
  free_in(r->chain, r, p);
  return HSM_REG_CHAIN_BLOCK;
}

size_t hsm_chain_usable_routed(const void *p, unsigned *kind) {
  unsigned prior;
  hsm_cregion_t *r = hsm_chain_region_of(p, *kind, &prior);
  if (r == NULL) {
    *kind = prior;
    return 0;
  }
  *kind = HSM_REG_CHAIN_BLOCK;
  return hsm_chain_usable(r, p);
}

void *hsm_chain_realloc_routed(void *p, size_t size, unsigned kind, int *done) {
  unsigned prior;
  hsm_cregion_t *r = hsm_chain_region_of(p, kind, &prior);
  *done = r != NULL;
  return r ? realloc_in(r->chain, r, p, size, 0, "realloc") : NULL;
}

void *hsm_chain_alloc_default(hsmalloc_chain_t *c, size_t size, int zero) {
  void *p = alloc_locked(c, size, 0, "malloc");
  if (zero && p != NULL) memset(p, 0, size);
  return p;
}

void *hsm_chain_memalign_default(hsmalloc_chain_t *c, size_t align, size_t size) {
  return aligned_in(c, align, size, "aligned allocation");
}
