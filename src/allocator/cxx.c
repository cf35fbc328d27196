/* C++ operator new and delete, all variants, under their mangled names, written in
 * C so that C programs using hsmalloc do not need libstdc++. A failing throwing new
 * runs the installed new-handler and retries, then throws std::bad_alloc; both are
 * looked up in libstdc++ at that moment (only C++ programs can reach them).
 * Limitation: a new-handler that throws inside a nothrow new propagates (C cannot
 * catch it). This file is built with -fexceptions so exceptions unwind through it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#include "cxx_operators.h"
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
 * the fast path itself needs no stack frame; each takes the size first, where new got
 * it (in the first argument's register: no move on the fast path). */
static __attribute__((noinline)) void *new_plain(size_t n, int nothrow) {
  return new_impl(n, 0, nothrow);
}

/* More than HSM_SITE_MAX bytes: no lane, no packed class (hsm_new_malloc is malloc
 * there), so malloc's fast path itself, one call deep. */
static __attribute__((noinline)) void *new_big(size_t n, int nothrow) {
  void *p = hsm_malloc(n);
  return HSM_LIKELY(p != NULL) ? p : new_failed(n, 0, nothrow);
}

/* lane 0 of a site whose new may be packed (site.c): the packed classes */
static __attribute__((noinline)) void *new_packed(size_t n, int nothrow) {
  void *p = hsm_packed_alloc(n);
  return HSM_LIKELY(p != NULL) ? p : new_failed(n, 0, nothrow);
}

static __attribute__((noinline)) void *new_lane_slow(size_t n, hsm_heap_t *heap, size_t cls,
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

/* The fast path missed its slot: a site the table does not hold (learn its lane), a
 * site of lane 0 after lanes were off, a known site asking for another size, lanes
 * off, or no heap yet. */
static __attribute__((noinline)) void *new_miss(size_t n, hsm_heap_t *heap, uintptr_t pc,
                                                int nothrow) {
  if (!heap->site_lanes) {
    if (heap == &hsm_heap_empty) return new_first(n, pc, nothrow);
    return new_plain(n, nothrow);
  }
  unsigned slot = (unsigned)(pc % HSM_SITE_SLOTS);
  if (heap->site_pc[slot] != pc) {
    hsm_site_learn(heap, slot, pc, n);
  } else if (heap->site_base[slot] == 0) { /* lane 0 again, after lanes were off */
    heap->site_sc[slot][0] = hsm_site_lane0(heap, slot);
    if (heap->site_row[slot] != 0) return new_plain(n, nothrow);
    return new_packed(n, nothrow);
  } else {
    hsm_site_resize(heap, slot, n);
  }
  return new_site(n, pc, nothrow);
}

/* The list pop of new's fast path, the same for either page. */
static inline __attribute__((always_inline)) void *new_pop(hsm_heap_t *heap, hsm_page_t *pg,
                                                           hsm_block_t *b, size_t cls, size_t n) {
  pg->free = b->next; /* no secure page: lanes are off in secure mode */
  b->mark = 0;
  pg->used++;
  hsm_count_class(heap, cls, n);
  return b;
}

/* new of up to HSM_SITE_MAX bytes from a call site the heap's table holds (site.c);
 * its slot (the return address modulo 256: the same in every run, as ASLR moves code
 * by whole 4 KiB pages) keeps the size the site last asked for:
 *   - that size, for a site of lane 1 or up: the class of the size in the site's lane
 *     is in the slot too, so a hit is three compares and a list pop from the class's
 *     current page (direct, not fast_direct: a hot-size window, which empties
 *     fast_direct until malloc has made enough allocations, does not sample lanes);
 *   - HSM_SITE_MALLOC, for a site of lane 0 whose new may be packed: malloc's fast
 *     path on the packed classes (the class by size from class8, hot sizes included;
 *     fast_direct empty sends it to hsm_packed_alloc);
 *   - HSM_SITE_PLAIN, for a site of lane 0 at 16-byte alignment: hsm_new_malloc;
 *   - anything else (another size, lanes off: no slot keeps a size then,
 *     hsm_site_lanes_update): new_miss.
 * More than HSM_SITE_MAX bytes goes to malloc's fast path before the slot is read. */
static inline __attribute__((always_inline)) void *new_site(size_t n, uintptr_t pc, int nothrow) {
  if (HSM_UNLIKELY(n > HSM_SITE_MAX)) return new_big(n, nothrow);
  hsm_heap_t *heap = hsm_tls_heap;
  unsigned slot = (unsigned)(pc % HSM_SITE_SLOTS);
  if (HSM_UNLIKELY(heap->site_pc[slot] != pc)) return new_miss(n, heap, pc, nothrow);
  unsigned kept = heap->site_sc[slot][0];
  if (HSM_LIKELY(kept == n)) {
    size_t cls = heap->site_sc[slot][1];
    hsm_page_t *pg = &heap->cache[cls];
    hsm_block_t *b = pg->free;
    if (HSM_UNLIKELY(b == NULL)) return new_lane_slow(n, heap, cls, nothrow);
    return new_pop(heap, pg, b, cls, n);
  }
  if (HSM_LIKELY(kept == HSM_SITE_MALLOC)) {
    size_t cls = heap->class8[(n + 7) >> 3]; /* packed (malloc's fast_class may not be) */
    hsm_page_t *pg = heap->fast_direct[cls];
    hsm_block_t *b = pg->free;
    if (HSM_UNLIKELY(b == NULL)) return new_packed(n, nothrow);
    return new_pop(heap, pg, b, cls, n);
  }
  if (HSM_LIKELY(kept == HSM_SITE_PLAIN)) return new_plain(n, nothrow);
  return new_miss(n, heap, pc, nothrow);
}
#define SITE ((uintptr_t)__builtin_return_address(0))

/* A program may replace operator new(size_t) and operator delete(void*) (FreeFem++ does,
 * to count its pointers) and not the other variants: their standard defaults then call
 * the program's (sized delete calls delete(ptr), new[] calls new(size), nothrow new
 * calls new in a try block...). Ours are free/malloc themselves, so under this library
 * such a program's deletes would skip its operator delete, and its pool's blocks would
 * reach free. At start-up each variant whose default reaches a replaced operator
 * (cxx_operators.h) is pointed at the next definition (libstdc++'s), which is that
 * default; the others keep the fast path, at the cost of a compare and a never-taken
 * branch. fwd[i] NULL: ours; else the default to call (reaches the program's). Each operator tests it in
 * memory and read it again to call (volatile): a compare, a branch and the jump to free,
 * one instruction less than a load, a test, a branch and the jump. */
static void *fwd[N_OPS];

__attribute__((constructor)) static void hsm_cxx_find_replaced(void) {
  unsigned char reaches[N_OPS];
  cxx_ops_reaching_replaced((const void *)hsm_cxx_find_replaced, reaches);
  for (int i = 0; i < N_OPS; i++)
    if (reaches[i]) fwd[i] = dlsym(RTLD_NEXT, cxx_op_names[i]); /* none: ours stays */
}

typedef const struct nothrow_s *nothrow_t;
typedef void *(*new1_t)(size_t);
typedef void *(*new2_t)(size_t, size_t);
typedef void *(*new_nt_t)(size_t, nothrow_t);
typedef void *(*new2_nt_t)(size_t, size_t, nothrow_t);
typedef void (*del1_t)(void *);
typedef void (*del2_t)(void *, size_t);
typedef void (*del3_t)(void *, size_t, size_t);
typedef void (*del_nt_t)(void *, nothrow_t);
typedef void (*del2_nt_t)(void *, size_t, nothrow_t);

/* One line per operator reads as the table it is. */
/* clang-format off */
#define OP_NEW(name, ...) HSM_EXPORT void *name(__VA_ARGS__)
#define OP_DEL(name, ...) HSM_EXPORT void name(__VA_ARGS__)
#define FWD(op, type, ...) do { if (HSM_UNLIKELY(fwd[op] != NULL)) return ((type)*(void *volatile *)&fwd[op])(__VA_ARGS__); } while (0)
#define DFWD(op, type, ...) do { if (HSM_UNLIKELY(fwd[op] != NULL)) { ((type)*(void *volatile *)&fwd[op])(__VA_ARGS__); return; } } while (0)

OP_NEW(_Znwm, size_t n) { return new_site(n, SITE, 0); }
OP_NEW(_Znam, size_t n) { FWD(NEW_ARR, new1_t, n); return new_site(n, SITE, 0); }
OP_NEW(_ZnwmRKSt9nothrow_t, size_t n, nothrow_t t) { FWD(NEW_NT, new_nt_t, n, t); return new_impl(n, 0, 1); }
OP_NEW(_ZnamRKSt9nothrow_t, size_t n, nothrow_t t) { FWD(NEW_ARR_NT, new_nt_t, n, t); return new_impl(n, 0, 1); }
OP_NEW(_ZnwmSt11align_val_t, size_t n, size_t a) { return new_impl(n, a, 0); }
OP_NEW(_ZnamSt11align_val_t, size_t n, size_t a) { FWD(NEW_ARR_AL, new2_t, n, a); return new_impl(n, a, 0); }
OP_NEW(_ZnwmSt11align_val_tRKSt9nothrow_t, size_t n, size_t a, nothrow_t t) { FWD(NEW_AL_NT, new2_nt_t, n, a, t); return new_impl(n, a, 1); }
OP_NEW(_ZnamSt11align_val_tRKSt9nothrow_t, size_t n, size_t a, nothrow_t t) { FWD(NEW_ARR_AL_NT, new2_nt_t, n, a, t); return new_impl(n, a, 1); }

/* operator delete(void*) and its aligned form are free itself (free.c: an alias must
 * live beside its target); the others are free unless they go on to the program's */
OP_DEL(_ZdaPv, void *p) { DFWD(DEL_ARR, del1_t, p); hsm_free(p); }
OP_DEL(_ZdlPvm, void *p, size_t n) { DFWD(DEL_SZ, del2_t, p, n); hsm_free(p); }
OP_DEL(_ZdaPvm, void *p, size_t n) { DFWD(DEL_ARR_SZ, del2_t, p, n); hsm_free(p); }
OP_DEL(_ZdlPvRKSt9nothrow_t, void *p, nothrow_t t) { DFWD(DEL_NT, del_nt_t, p, t); hsm_free(p); }
OP_DEL(_ZdaPvRKSt9nothrow_t, void *p, nothrow_t t) { DFWD(DEL_ARR_NT, del_nt_t, p, t); hsm_free(p); }
OP_DEL(_ZdaPvSt11align_val_t, void *p, size_t a) { DFWD(DEL_ARR_AL, del2_t, p, a); hsm_free(p); }
OP_DEL(_ZdlPvmSt11align_val_t, void *p, size_t n, size_t a) { DFWD(DEL_SZ_AL, del3_t, p, n, a); hsm_free(p); }
OP_DEL(_ZdaPvmSt11align_val_t, void *p, size_t n, size_t a) { DFWD(DEL_ARR_SZ_AL, del3_t, p, n, a); hsm_free(p); }
OP_DEL(_ZdlPvSt11align_val_tRKSt9nothrow_t, void *p, size_t a, nothrow_t t) { DFWD(DEL_AL_NT, del2_nt_t, p, a, t); hsm_free(p); }
OP_DEL(_ZdaPvSt11align_val_tRKSt9nothrow_t, void *p, size_t a, nothrow_t t) { DFWD(DEL_ARR_AL_NT, del2_nt_t, p, a, t); hsm_free(p); }
/* clang-format on */
