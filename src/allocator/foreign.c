/* Pointers hsmalloc did not hand out (a library that called glibc's allocator
 * directly, or memory from before hsmalloc was loaded) go back to glibc. glibc's
 * functions are looked up on first use, after hsmalloc is running, because
 * dlsym itself may allocate. */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "internal.h"

typedef void (*free_fn)(void *);
typedef size_t (*usable_fn)(void *);

static _Atomic(free_fn) libc_free;
static _Atomic(usable_fn) libc_usable;

static free_fn get_free(void) {
  free_fn f = atomic_load_explicit(&libc_free, memory_order_acquire);
  if (f == NULL) {
    f = (free_fn)dlsym(RTLD_NEXT, "free");
    atomic_store_explicit(&libc_free, f, memory_order_release);
  }
  return f;
}

void hsm_foreign_free(void *p) {
  atomic_fetch_add_explicit(&hsm_gstats.foreign_frees, 1, memory_order_relaxed);
  free_fn f = get_free();
  if (f != NULL) f(p); /* without glibc's free the block is leaked, never misused */
}

/* glibc keeps the chunk size (flags in the low 3 bits, bit 1 = mmapped) in the word
 * before the block; used only if malloc_usable_size cannot be looked up. */
static size_t chunk_usable(void *p) {
  size_t word = ((size_t *)p)[-1];
  size_t size = word & ~(size_t)7;
  size_t overhead = (word & 2) ? 2 * sizeof(size_t) : sizeof(size_t);
  return size > overhead ? size - overhead : 0;
}

size_t hsm_foreign_usable_size(void *p) {
  usable_fn f = atomic_load_explicit(&libc_usable, memory_order_acquire);
  if (f == NULL) {
    f = (usable_fn)dlsym(RTLD_NEXT, "malloc_usable_size");
    atomic_store_explicit(&libc_usable, f, memory_order_release);
  }
  return f != NULL ? f(p) : chunk_usable(p);
}
