/* The malloc API contract, checked under whatever allocator the process runs
 * (the tests run it with LD_PRELOAD=libhsmalloc.so and linked with -lhsmalloc).
 * Prints "ok <count>" and exits 0, or names the first failed check and exits 1.
 * With argument "owned" it also asserts every pointer belongs to hsmalloc. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Walloc-size-larger-than="

static int checks;
static int (*owns)(const void *);

#define CHECK(cond)                                                            \
  do {                                                                         \
    checks++;                                                                  \
    if (!(cond)) {                                                             \
      fprintf(stderr, "FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);        \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define OWNED(p) CHECK(owns == NULL || owns(p))

static void fill(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)(seed + i * 31);
}
static int same(const unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != (unsigned char)(seed + i * 31))
      return 0;
  return 1;
}

static void test_zero_size(void) {
  void *a = malloc(0), *b = malloc(0);
  CHECK(a != NULL && b != NULL && a != b);
  OWNED(a);
  free(a);
  free(b);
}

static void test_overflow(void) {
  errno = 0;
  CHECK(calloc(SIZE_MAX / 2, 3) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(malloc(SIZE_MAX - 4096) == NULL && errno == ENOMEM);
  void *p = malloc(16);
  errno = 0;
  CHECK(reallocarray(p, SIZE_MAX / 4, 8) == NULL && errno == ENOMEM);
  free(p); /* untouched by the failed call */
  errno = 0;
  CHECK(pvalloc(SIZE_MAX - 10) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(aligned_alloc(64, SIZE_MAX - 100) == NULL && errno == ENOMEM);
  errno = 0;
  CHECK(realloc(NULL, SIZE_MAX - 100) == NULL && errno == ENOMEM);
}

static void test_posix_memalign(void) {
  void *sentinel = (void *)0x1234, *p = sentinel;
  CHECK(posix_memalign(&p, 24, 100) == EINVAL &&
        p == sentinel); /* not a power of two */
  CHECK(posix_memalign(&p, 4, 100) == EINVAL &&
        p == sentinel); /* below sizeof(void *) */
  CHECK(posix_memalign(&p, 0, 100) == EINVAL && p == sentinel);
  CHECK(posix_memalign(&p, 64, SIZE_MAX - 100) == ENOMEM && p == sentinel);
  CHECK(posix_memalign(&p, 8, 0) == 0 && p != NULL);
  free(p);
}

static void test_alignments(void) {
  size_t sizes[] = {1, 7, 24, 100, 4000, 70000, 300000, 3000000};
  for (size_t align = 8; align <= ((size_t)1 << 20); align <<= 1) {
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
      size_t n = sizes[i];
      void *p = NULL;
      CHECK(posix_memalign(&p, align, n) == 0);
      CHECK(((uintptr_t)p & (align - 1)) == 0);
      CHECK(malloc_usable_size(p) >= n);
      OWNED(p);
      memset(p, 0xab, n);
      void *q = aligned_alloc(align, n);
      CHECK(q != NULL && ((uintptr_t)q & (align - 1)) == 0 &&
            malloc_usable_size(q) >= n);
      void *r = memalign(align, n);
      CHECK(r != NULL && ((uintptr_t)r & (align - 1)) == 0 &&
            malloc_usable_size(r) >= n);
      free(p);
      free(q);
      free(r);
    }
  }
  /* beyond the guaranteed 1 MiB */
  void *big = aligned_alloc((size_t)4 << 20, 1000);
  CHECK(big != NULL && ((uintptr_t)big & (((size_t)4 << 20) - 1)) == 0);
  free(big);
  long page = sysconf(_SC_PAGESIZE);
  void *v = valloc(10), *pv = pvalloc(10);
  CHECK(v && ((uintptr_t)v % (uintptr_t)page) == 0);
  CHECK(pv && ((uintptr_t)pv % (uintptr_t)page) == 0 &&
        malloc_usable_size(pv) >= (size_t)page);
  free(v);
  free(pv);
  void *m = memalign(3, 10); /* glibc rounds the alignment up */
  CHECK(m != NULL && ((uintptr_t)m & 3) == 0);
  free(m);
  m = aligned_alloc(48, 100); /* glibc 2.36: the same as memalign */
  CHECK(m != NULL && ((uintptr_t)m & 63) == 0);
  free(m);
  /* malloc is 16-aligned above 8 bytes, except the packed sizes 16k+1 .. 16k+8
   * (17-120, 8-aligned) with HSMALLOC_PACKED=1 or all; memalign(16, n) is
   * always 16-aligned */
  const char *pk = getenv("HSMALLOC_PACKED");
  int packed = pk != NULL && (strcmp(pk, "1") == 0 || strcmp(pk, "all") == 0);
  for (size_t n = 1; n <= 2048; n++) {
    size_t want =
        n <= 8 || (packed && n > 16 && n <= 120 && (n - 1) % 16 < 8) ? 8 : 16;
    void *p[32], *a[32];
    uintptr_t any = 0;
    for (int k = 0; k < 32;
         k++) { /* 8-aligned blocks fall on both halves of 16 bytes (in */
      p[k] = malloc(n); /* secure mode in random order: hence 32 of them) */
      CHECK(p[k] != NULL && ((uintptr_t)p[k] & (want - 1)) == 0 &&
            malloc_usable_size(p[k]) >= n);
      a[k] = memalign(16, n);
      CHECK(a[k] != NULL && ((uintptr_t)a[k] & 15) == 0 &&
            malloc_usable_size(a[k]) >= n);
      any |= (uintptr_t)p[k];
    }
    if (want == 8 && n > 8 && owns != NULL)
      CHECK((any & 15) == 8); /* hsmalloc's packed class */
    for (int k = 0; k < 32; k++) {
      free(p[k]);
      free(a[k]);
    }
  }
  /* realloc through every small class boundary, up and down: the contents move
   * along */
  unsigned char *r = malloc(1);
  CHECK(r != NULL);
  r[0] = 1;
  for (size_t n = 2; n <= 300; n++) {
    r = realloc(r, n);
    CHECK(r != NULL && malloc_usable_size(r) >= n &&
          r[n - 2] == (unsigned char)(n - 1));
    r[n - 1] = (unsigned char)n;
  }
  for (size_t n = 299; n >= 1; n--) {
    r = realloc(r, n);
    CHECK(r != NULL && malloc_usable_size(r) >= n &&
          r[n - 1] == (unsigned char)n);
  }
  free(r);
}

static void test_usable_and_calloc(void) {
  size_t sizes[] = {1,    8,     9,      64,     65,      129,    1000,
                    8191, 65536, 131073, 500000, 1048577, 5000000};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    unsigned char *p = malloc(n);
    CHECK(p != NULL && malloc_usable_size(p) >= n);
    memset(p, 0xff, malloc_usable_size(p));
    free(p);
    unsigned char *z = calloc(n, 1); /* likely reuses the dirty block */
    CHECK(z != NULL);
    int zero = 1;
    for (size_t k = 0; k < n; k++)
      zero &= z[k] == 0;
    CHECK(zero);
    free(z);
  }
  CHECK(malloc_usable_size(NULL) == 0);
}

static void test_realloc(void) {
  unsigned char *p = realloc(NULL, 100);
  CHECK(p != NULL);
  fill(p, 100, 7);
  size_t steps[] = {200, 50, 4000, 100000, 3000000, 10, 70000, 1};
  size_t have = 100;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    size_t n = steps[i];
    p = realloc(p, n);
    CHECK(p != NULL && malloc_usable_size(p) >= n);
    size_t keep = have < n ? have : n;
    CHECK(same(p, keep, 7));
    fill(p, n, 7);
    have = n;
  }
  errno = 0;
  CHECK(realloc(p, 0) == NULL); /* glibc: frees, returns NULL */
  void *q = malloc(32);
  CHECK(reallocarray(q, 10, 10) != NULL);
}

/* hsmalloc only: a large block shrinks in place, then grows back into its own
 * tail. */
static void test_large_realloc_in_place(void) {
  unsigned char *p = malloc(900000);
  CHECK(p != NULL);
  fill(p, 900000, 3);
  unsigned char *q = realloc(p, 200000);
  CHECK(q == p && same(q, 200000, 3));
  CHECK(malloc_usable_size(q) >= 200000 && malloc_usable_size(q) < 300000);
  q = realloc(q, 900000);
  CHECK(q == p && same(q, 200000, 3));
  free(q);
}

static void test_free_keeps_errno(void) {
  free(NULL);
  void *blocks[6] = {malloc(10),
                     malloc(1000),
                     malloc(200000),
                     malloc(3 << 20),
                     aligned_alloc(4096, 5000),
                     aligned_alloc((size_t)2 << 20, 100)};
  for (int i = 0; i < 6; i++) {
    errno = 4242;
    free(blocks[i]);
    CHECK(errno == 4242);
  }
  /* C23 names (glibc 2.36 lacks them; hsmalloc must have them) */
  void (*fsized)(void *, size_t) =
      (void (*)(void *, size_t))dlsym(RTLD_DEFAULT, "free_sized");
  void (*faligned)(void *, size_t, size_t) =
      (void (*)(void *, size_t, size_t))dlsym(RTLD_DEFAULT,
                                              "free_aligned_sized");
  CHECK(owns == NULL || (fsized != NULL && faligned != NULL));
  errno = 77;
  if (fsized)
    fsized(malloc(40), 40);
  if (faligned)
    faligned(aligned_alloc(256, 512), 256, 512);
  CHECK(errno == 77);
}

static void test_introspection(void) {
  void *p = malloc(1000);
  struct mallinfo2 mi = mallinfo2();
  CHECK(mi.uordblks >= 1000);
  CHECK(mallopt(M_ARENA_MAX, 2) == 1);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK(malloc_info(0, f) == 0);
  fclose(f);
  CHECK(buf != NULL && strstr(buf, "<malloc") != NULL);
  free(buf);
  free(p);
  malloc_trim(0);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "owned") == 0) {
    owns = (int (*)(const void *))dlsym(RTLD_DEFAULT, "hsmalloc_owns");
    CHECK(owns != NULL);
  }
  test_zero_size();
  test_overflow();
  test_posix_memalign();
  test_alignments();
  test_usable_and_calloc();
  test_realloc();
  test_free_keeps_errno();
  if (owns)
    test_large_realloc_in_place();
  test_introspection();
  printf("ok %d\n", checks);
  return 0;
}
