/* glibc's API besides the functions aliased in alloc.c and free.c: aligned
 * allocation, reallocarray, sized frees, and the introspection calls answered from
 * hsmalloc's state. Argument checks follow glibc 2.36. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hsmalloc.h"
#include "internal.h"

#ifndef HSMALLOC_NO_OVERRIDE

#define EXPORT HSM_EXPORT

EXPORT size_t malloc_usable_size(void *p) { return hsm_usable_size(p); }

EXPORT void *reallocarray(void *p, size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  return hsm_realloc(p, total);
}

EXPORT void free_sized(void *p, size_t size) {
  (void)size;
  hsm_free(p);
}
EXPORT void free_aligned_sized(void *p, size_t align, size_t size) {
  (void)align;
  (void)size;
  hsm_free(p);
}

EXPORT int posix_memalign(void **memptr, size_t align, size_t size) {
  if (!hsm_is_pow2(align) || align % sizeof(void *) != 0) return EINVAL;
  int err = errno;
  void *p = hsm_memalign(align, size);
  if (p == NULL) {
    errno = err;
    return ENOMEM;
  }
  *memptr = p;
  return 0;
}
EXPORT int __posix_memalign(void **memptr, size_t align, size_t size)
    __attribute__((alias("posix_memalign")));

/* glibc 2.36: alignment below 16 means 16, a non-power of two is rounded up, an
 * alignment above half the address space is EINVAL. aligned_alloc is the same
 * function there (2.38 started rejecting non-powers of two; programs built on
 * this glibc do not expect that). */
EXPORT void *memalign(size_t align, size_t size) {
  if (align > SIZE_MAX / 2 + 1) {
    errno = EINVAL;
    return NULL;
  }
  if (align < 16) align = 16;
  if (!hsm_is_pow2(align)) align = (size_t)1 << (64 - __builtin_clzl(align));
  return hsm_memalign(align, size);
}
EXPORT void *aligned_alloc(size_t align, size_t size) __attribute__((alias("memalign")));
EXPORT void *__libc_memalign(size_t align, size_t size) __attribute__((alias("memalign")));

EXPORT void *valloc(size_t size) { return hsm_memalign((size_t)getpagesize(), size); }
EXPORT void *__libc_valloc(size_t size) __attribute__((alias("valloc")));

EXPORT void *pvalloc(size_t size) {
  size_t page = (size_t)getpagesize(), rounded;
  if (__builtin_add_overflow(size, page - 1, &rounded)) {
    errno = ENOMEM;
    return NULL;
  }
  rounded &= ~(page - 1);
  return hsm_memalign(page, rounded ? rounded : page);
}
EXPORT void *__libc_pvalloc(size_t size) __attribute__((alias("pvalloc")));

EXPORT struct mallinfo2 mallinfo2(void) {
  hsmalloc_stats_t st;
  hsmalloc_stats_get(&st);
  struct mallinfo2 mi;
  memset(&mi, 0, sizeof mi);
  mi.arena = st.committed > st.huge_bytes ? st.committed - st.huge_bytes : 0; /* non-huge memory */
  mi.ordblks = st.pages;
  mi.hblks = st.huge_blocks;
  mi.hblkhd = st.huge_bytes;
  mi.usmblks = st.committed_peak;
  mi.uordblks = st.allocated_now > st.huge_bytes ? st.allocated_now - st.huge_bytes : 0;
  mi.fordblks = mi.arena > mi.uordblks ? mi.arena - mi.uordblks : 0;
  mi.keepcost = 0;
  return mi;
}

EXPORT struct mallinfo mallinfo(void) {
  struct mallinfo2 m2 = mallinfo2();
  struct mallinfo mi;
  mi.arena = (int)m2.arena;
  mi.ordblks = (int)m2.ordblks;
  mi.smblks = (int)m2.smblks;
  mi.hblks = (int)m2.hblks;
  mi.hblkhd = (int)m2.hblkhd;
  mi.usmblks = (int)m2.usmblks;
  mi.fsmblks = (int)m2.fsmblks;
  mi.uordblks = (int)m2.uordblks;
  mi.fordblks = (int)m2.fordblks;
  mi.keepcost = (int)m2.keepcost;
  return mi;
}

/* glibc's tuning knobs do not apply; accepted (returns 1) so programs carry on. */
EXPORT int mallopt(int param, int value) {
  (void)param;
  (void)value;
  return 1;
}

EXPORT int malloc_trim(size_t pad) {
  (void)pad;
  return hsmalloc_collect() > 0;
}

EXPORT void malloc_stats(void) { hsmalloc_stats_print(stderr); }

EXPORT int malloc_info(int options, FILE *fp) {
  if (options != 0) {
    errno = EINVAL;
    return -1;
  }
  hsmalloc_stats_t st;
  hsmalloc_stats_get(&st);
  fprintf(fp, "<malloc version=\"hsmalloc-1\">\n");
  for (size_t i = 0; i < HSM_CLASSES; i++) {
    if (st.bins[i].live == 0) continue;
    fprintf(fp, "<size from=\"%llu\" to=\"%llu\" total=\"%llu\" count=\"%llu\"/>\n",
            (unsigned long long)(i ? st.bins[i - 1].size + 1 : 1),
            (unsigned long long)st.bins[i].size,
            (unsigned long long)(st.bins[i].live * st.bins[i].size),
            (unsigned long long)st.bins[i].live);
  }
  fprintf(fp, "<total type=\"mmap\" count=\"%llu\" size=\"%llu\"/>\n",
          (unsigned long long)st.huge_blocks, (unsigned long long)st.huge_bytes);
  fprintf(fp, "<system type=\"current\" size=\"%llu\"/>\n", (unsigned long long)st.committed);
  fprintf(fp, "<system type=\"max\" size=\"%llu\"/>\n", (unsigned long long)st.committed_peak);
  fprintf(fp, "<aspace type=\"total\" size=\"%llu\"/>\n", (unsigned long long)st.reserved);
  fprintf(fp, "</malloc>\n");
  return 0;
}

#endif
