/* Blocks allocated by glibc's own malloc (reached the way a library bound to
 * glibc reaches it: through libc.so.6's symbols) and then released through the
 * process allocator: free, realloc, malloc_usable_size must hand them back, not
 * crash. Prints "ok foreign=<n>" with n = hsmalloc's count of foreign frees. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsmalloc.h"

#define N 100

int main(void) {
  void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  void *(*libc_malloc)(size_t) = (void *(*)(size_t))dlsym(libc, "malloc");
  int (*owns)(const void *) =
      (int (*)(const void *))dlsym(RTLD_DEFAULT, "hsmalloc_owns");
  int (*stats)(hsmalloc_stats_t *) =
      (int (*)(hsmalloc_stats_t *))dlsym(RTLD_DEFAULT, "hsmalloc_stats_get");
  if (!libc_malloc || !owns || !stats || libc_malloc == malloc) {
    fprintf(stderr, "setup: libc malloc %p, ours %p, hsmalloc_owns %p\n",
            (void *)libc_malloc, (void *)malloc, (void *)owns);
    return 2;
  }
  hsmalloc_stats_t before, after;
  stats(&before);
  size_t sizes[] = {1,    24,     100,
                    5000, 200000, 4 << 20}; /* small, large, glibc-mmapped */
  for (int i = 0; i < N; i++) {
    size_t n = sizes[i % 6];
    unsigned char *p = libc_malloc(n);
    if (p == NULL || owns(p)) {
      fprintf(stderr, "foreign block %p claimed\n", (void *)p);
      return 1;
    }
    memset(p, 0x5a, n);
    if (malloc_usable_size(p) < n) {
      fprintf(stderr, "usable %zu < %zu\n", malloc_usable_size(p), n);
      return 1;
    }
    if (i % 3 == 0) {
      unsigned char *q =
          realloc(p, n * 2 + 10); /* moves into hsmalloc, keeps contents */
      if (q == NULL || !owns(q)) {
        fprintf(stderr, "realloc of a foreign block\n");
        return 1;
      }
      for (size_t k = 0; k < n; k++)
        if (q[k] != 0x5a) {
          fprintf(stderr, "realloc lost byte %zu\n", k);
          return 1;
        }
      free(q);
    } else {
      free(p);
    }
  }
  stats(&after);
  printf("ok foreign=%llu\n",
         (unsigned long long)(after.foreign_frees - before.foreign_frees));
  return 0;
}
