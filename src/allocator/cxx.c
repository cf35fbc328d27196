/* C++ operator new and delete, all variants, under their mangled names, written in
 * C so that C programs using hsmalloc do not need libstdc++. A failing throwing new
 * runs the installed new-handler and retries, then throws std::bad_alloc; both are
 * looked up in libstdc++ at that moment (only C++ programs can reach them).
 * Limitation: a new-handler that throws inside a nothrow new propagates (C cannot
 * catch it). This file is built with -fexceptions so exceptions unwind through it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#include "internal.h"

typedef void (*new_handler_t)(void);

static void *alloc(size_t size, size_t align) {
  return align ? hsm_memalign(align, size) : hsm_new_malloc(size);
}

static void *new_failed(size_t size, size_t align, int nothrow) {
  for (;;) {
    new_handler_t (*get)(void) =
        (new_handler_t(*)(void))dlsym(RTLD_DEFAULT, "_ZSt15get_new_handlerv");
    new_handler_t handler = get ? get() : NULL;
    if (handler == NULL) {
      if (nothrow) return NULL;
      void (*throw_bad_alloc)(void) =
          (void (*)(void))dlsym(RTLD_DEFAULT, "_ZSt17__throw_bad_allocv");
      if (throw_bad_alloc) throw_bad_alloc();
      abort();
    }
    handler();
    void *p = alloc(size, align);
    if (p != NULL) return p;
  }
}

static inline void *new_impl(size_t size, size_t align, int nothrow) {
  void *p = alloc(size, align);
  if (HSM_LIKELY(p != NULL)) return p;
  return new_failed(size, align, nothrow);
}

/* The ways out of new_site's fast path, out of line and reached by tail calls, so that
 * the fast path itself needs no stack frame. */
static __attribute__((noinline)) void *new_plain(size_t n, int nothrow) {
  return new_impl(n, 0, nothrow);
}

/* lane 0 of a site whose new may be packed (site.c): malloc's classes */
static __attribute__((noinline)) void *new_packed(size_t n, int nothrow) {
  void *p = hsm_malloc(n);
  return HSM_LIKELY(p != NULL) ? p : new_failed(n, 0, nothrow);
}

static __attribute__((noinline)) void *new_lane_slow(hsm_heap_t *heap, size_t n, size_t cls,
                                                     int nothrow) {
  void *p = hsm_page_alloc_slow(heap, n, cls, 0);
  return p != NULL ? p : new_failed(n, 0, nothrow);
}

static void *new_site(size_t n, uintptr_t pc, int nothrow);

/* The thread's first new: make its heap, so that even this site is learned (its
 * verdict on packed blocks holds from its first object on). */
static __attribute__((noinline)) void *new_first(size_t n, uintptr_t pc, int nothrow) {
  hsm_heap_t *heap = hsm_heap_get_slow();
  if (heap == NULL || !heap->site_lanes) return new_plain(n, nothrow);
  return new_site(n, pc, nothrow);
}

/* A call site the heap's table does not hold: learn its lane, then allocate. */
static __attribute__((noinline)) void *new_learn(hsm_heap_t *heap, size_t n, uintptr_t pc,
                                                 int nothrow) {
  hsm_site_learn(heap, (unsigned)(pc % HSM_SITE_SLOTS), pc, n);
  return new_site(n, pc, nothrow);
}

/* new of up to HSM_SITE_MAX bytes from a call site with a lane (site.c): a list pop
 * from the lane's class; lane 0 and everything else take malloc's path. The table's
 * slot is the return address modulo 256: the same in every run, as ASLR moves code by
 * whole 4 KiB pages. */
static inline __attribute__((always_inline)) void *new_site(size_t n, uintptr_t pc, int nothrow) {
  hsm_heap_t *heap = hsm_tls_heap;
  if (HSM_LIKELY(n <= HSM_SITE_MAX && heap->site_lanes)) {
    unsigned slot = (unsigned)(pc % HSM_SITE_SLOTS);
    if (HSM_UNLIKELY(heap->site_pc[slot] != pc)) return new_learn(heap, n, pc, nothrow);
    unsigned base = heap->site_base[slot];
    unsigned row = heap->site_row[slot];
    if (base != 0) {
      /* row HSM_SITE_ROW: a packed size takes the 16-aligned class above it */
      size_t cls = base + hsm_site_class[row + ((n + 7) >> 3)];
      hsm_page_t *pg = heap->direct[cls];
      hsm_block_t *b = pg->free;
      if (HSM_UNLIKELY(b == NULL)) return new_lane_slow(heap, n, cls, nothrow);
      pg->free = b->next; /* no secure page: lanes are off in secure mode */
      b->mark = 0;
      pg->used++;
      HSM_COUNT(heap->stats.allocs[cls], 1);
      HSM_COUNT(heap->stats.requested[cls], n);
      return b;
    }
    if (row == 0) return new_packed(n, nothrow);
  } else if (n <= HSM_SITE_MAX && heap == &hsm_heap_empty) {
    return new_first(n, pc, nothrow);
  }
  return new_plain(n, nothrow);
}
#define SITE ((uintptr_t)__builtin_return_address(0))

/* One line per operator reads as the table it is. */
/* clang-format off */
#define NEW(name, ...) HSM_EXPORT void *name(__VA_ARGS__)
#define DEL(name, ...) HSM_EXPORT void name(__VA_ARGS__)
typedef struct nothrow_s nothrow_t;

NEW(_Znwm, size_t n) { return new_site(n, SITE, 0); }
NEW(_Znam, size_t n) { return new_site(n, SITE, 0); }
NEW(_ZnwmRKSt9nothrow_t, size_t n, const nothrow_t *t) { (void)t; return new_impl(n, 0, 1); }
NEW(_ZnamRKSt9nothrow_t, size_t n, const nothrow_t *t) { (void)t; return new_impl(n, 0, 1); }
NEW(_ZnwmSt11align_val_t, size_t n, size_t a) { return new_impl(n, a, 0); }
NEW(_ZnamSt11align_val_t, size_t n, size_t a) { return new_impl(n, a, 0); }
NEW(_ZnwmSt11align_val_tRKSt9nothrow_t, size_t n, size_t a, const nothrow_t *t) { (void)t; return new_impl(n, a, 1); }
NEW(_ZnamSt11align_val_tRKSt9nothrow_t, size_t n, size_t a, const nothrow_t *t) { (void)t; return new_impl(n, a, 1); }

DEL(_ZdlPv, void *p) { hsm_free(p); }
DEL(_ZdaPv, void *p) { hsm_free(p); }
DEL(_ZdlPvm, void *p, size_t n) { (void)n; hsm_free(p); }
DEL(_ZdaPvm, void *p, size_t n) { (void)n; hsm_free(p); }
DEL(_ZdlPvRKSt9nothrow_t, void *p, const nothrow_t *t) { (void)t; hsm_free(p); }
DEL(_ZdaPvRKSt9nothrow_t, void *p, const nothrow_t *t) { (void)t; hsm_free(p); }
DEL(_ZdlPvSt11align_val_t, void *p, size_t a) { (void)a; hsm_free(p); }
DEL(_ZdaPvSt11align_val_t, void *p, size_t a) { (void)a; hsm_free(p); }
DEL(_ZdlPvmSt11align_val_t, void *p, size_t n, size_t a) { (void)n; (void)a; hsm_free(p); }
DEL(_ZdaPvmSt11align_val_t, void *p, size_t n, size_t a) { (void)n; (void)a; hsm_free(p); }
DEL(_ZdlPvSt11align_val_tRKSt9nothrow_t, void *p, size_t a, const nothrow_t *t) { (void)a; (void)t; hsm_free(p); }
DEL(_ZdaPvSt11align_val_tRKSt9nothrow_t, void *p, size_t a, const nothrow_t *t) { (void)a; (void)t; hsm_free(p); }
/* clang-format on */
