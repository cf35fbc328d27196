/* hsmalloc's size classes, checked exactly against the rule docs/hsmalloc.md
 * states: small classes are 16 (requests of 0-8 bytes), 16 to 128 by 8, then 8
 * classes per doubling up to 128 KiB; large blocks (up to 1984 KiB) are runs of
 * whole 64 KiB slices; anything bigger is a huge block with its own mapping.
 * The expected table is derived here from that rule, never read from the
 * allocator.
 *
 * Runs under LD_PRELOAD=libhsmalloc.so with one mode:
 *   table       per class: the block size hsmalloc_stats_get reports, and that
 * a request of the class's size and one of the previous class's size + 1 land
 * in that class (its statistics bin) with exactly that block size; one byte
 * more than the largest class is a large block usable      malloc_usable_size
 * of malloc(n) and calloc(n, 1) for every n from 0 to the largest small class:
 * exactly the smallest class holding n (and three slices for the first large
 * size) stride      in a fresh thread (a fresh heap), the blocks of one page of
 * each class come out in address order exactly one class size apart; the first
 *               large size gets slice-aligned blocks that do not overlap
 *   boundaries  sizes around every class boundary, the small/large boundary,
 * every slice boundary of large blocks, a sweep up to the huge threshold and
 *               past it: the block size, and the one statistics bin that counts
 * it Prints "ok <mode> classes=<n> largest=<bytes> checks=<n>", or the first
 * failed check and exits 1. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"

#define KIB ((size_t)1024)
#define SMALL_MAX (128 * KIB) /* largest small class */
#define SLICE (64 * KIB)      /* large blocks are runs of these */
#define LARGE_MAX                                                              \
  (1984 * KIB)         /* above: huge (31 slices, a segment but its header) */
#define HUGE_PAGE 4096 /* a huge block's mapping is in 4 KiB pages */
#define MAX_CLASSES 128

static size_t classes[MAX_CLASSES];
static int nclasses;
static int (*owns)(const void *);
static int (*stats_get)(hsmalloc_stats_t *);

/* The documented rule, step by step. */
static void derive_classes(void) {
  classes[nclasses++] =
      16; /* 0-8 bytes: a free block holds a link and a free mark */
  for (size_t s = 16; s <= 128; s += 8)
    classes[nclasses++] = s;
  for (size_t low = 128; low < SMALL_MAX; low *= 2)
    for (size_t k = 1; k <= 8; k++)
      classes[nclasses++] = low + k * (low / 8);
}

/* Index of the smallest class holding n (n <= SMALL_MAX). */
static int class_index(size_t n) {
  int i = n <= 8 ? 0 : 1;
  while (classes[i] < n)
    i++;
  return i;
}

/* The statistics bin a request of n bytes is counted in: its class, then
 * "large", then "huge" (hsmalloc.h). */
static int expected_bin(size_t n) {
  if (n <= SMALL_MAX)
    return class_index(n);
  return n <= LARGE_MAX ? nclasses : nclasses + 1;
}

static hsmalloc_stats_t before, after;

/* The one bin whose allocation count grew between `before` and `after`, or -1
 * when none or several did. */
static int bin_that_counted(void) {
  int found = -1;
  for (int b = 0; b < HSMALLOC_STAT_BINS; b++) {
    uint64_t grew = after.bins[b].allocs - before.bins[b].allocs;
    if (grew == 0)
      continue;
    if (grew != 1 || found >= 0)
      return -1;
    found = b;
  }
  return found;
}

/* Allocate n bytes, check the block size and the bin that counted it, free it.
 */
static void check_request(size_t n) {
  stats_get(&before);
  char *p = malloc(n);
  stats_get(&after);
  CHECK(p != NULL, "malloc(%zu) failed", n);
  CHECK(owns(p), "malloc(%zu) not served by hsmalloc", n);
  size_t usable = malloc_usable_size(p);
  int bin = bin_that_counted(), want = expected_bin(n);
  CHECK(bin == want, "malloc(%zu) counted in bin %d, expected bin %d", n, bin,
        want);
  if (n <= SMALL_MAX) {
    CHECK(usable == classes[want],
          "malloc(%zu): block of %zu bytes, class is %zu", n, usable,
          classes[want]);
  } else if (n <= LARGE_MAX) {
    size_t slices = (n + SLICE - 1) / SLICE * SLICE;
    CHECK(usable == slices,
          "malloc(%zu): large block of %zu bytes, expected %zu", n, usable,
          slices);
  } else {
    CHECK(usable >= n && usable % HUGE_PAGE == 0,
          "malloc(%zu): huge block of %zu bytes", n, usable);
  }
  p[0] = 1;
  p[n ? n - 1 : 0] = 1;
  free(p);
}

static void mode_table(void) {
  CHECK(HSMALLOC_STAT_BINS == nclasses + 2, "%d bins for %d classes",
        HSMALLOC_STAT_BINS, nclasses);
  stats_get(&after);
  for (int i = 0; i < nclasses; i++) {
    CHECK(after.bins[i].size == classes[i],
          "class %d reported as %llu bytes, rule says %zu", i,
          (unsigned long long)after.bins[i].size, classes[i]);
    check_request(classes[i]);
    check_request(i == 0 ? 1 : i == 1 ? 9 : classes[i - 1] + 1);
  }
  CHECK(after.bins[nclasses].size == 0 && after.bins[nclasses + 1].size == 0,
        "large and huge bins report a size");
  check_request(classes[nclasses - 1] + 1);
}

/* malloc takes the packed classes (24, 40 .. 120) only with HSMALLOC_PACKED=1
 * or all; by default 16k+1 .. 16k+8 round up to 16k+16, as glibc's 16-byte
 * alignment needs */
static size_t malloc_size(size_t n) {
  const char *pk = getenv("HSMALLOC_PACKED");
  int packed = pk != NULL && (strcmp(pk, "1") == 0 || strcmp(pk, "all") == 0);
  return packed || n <= 16 || n > 120 || (n - 1) % 16 >= 8 ? n
                                                           : (n + 15) / 16 * 16;
}

static void mode_usable(void) {
  for (size_t n = 0; n <= SMALL_MAX + 1; n++) {
    size_t want = n <= SMALL_MAX ? classes[class_index(malloc_size(n))]
                                 : (n + SLICE - 1) / SLICE * SLICE;
    char *p = malloc(n);
    CHECK(p != NULL && owns(p), "malloc(%zu)", n);
    size_t got = malloc_usable_size(p);
    CHECK(got == want, "malloc(%zu): usable %zu, expected %zu", n, got, want);
    free(p);
    p = calloc(n, 1);
    CHECK(p != NULL && owns(p), "calloc(%zu, 1)", n);
    got = malloc_usable_size(p);
    CHECK(got == want, "calloc(%zu, 1): usable %zu, expected %zu", n, got,
          want);
    free(p);
  }
}

/* A fresh heap has no page of any class yet: the first page of a class starts
 * on a slice (64 KiB) and is carved in address order. A page of a class up to 8
 * KiB is one slice; a bigger class's page holds at least two blocks up to 64
 * KiB, one above. */
static void *stride_thread(void *arg) {
  (void)arg;
  for (int i = 0; i < nclasses; i++) {
    size_t size = classes[i],
           request = i == 0 ? 8 : size; /* class 0 serves 0-8 bytes */
    size_t n = size <= 8 * KIB ? SLICE / size : size <= SLICE ? 2 : 1;
    char *first = malloc(request), *prev = first;
    CHECK(first != NULL && owns(first), "malloc(%zu)", size);
    CHECK((uintptr_t)first % SLICE == 0,
          "class %zu: first block %p is not a fresh page's start", size,
          (void *)first);
    for (size_t k = 1; k < n; k++) {
      char *p = malloc(request);
      CHECK(p == prev + size,
            "class %zu: block %zu at %p, previous at %p (stride %td)", size, k,
            (void *)p, (void *)prev, p - prev);
      prev = p;
    }
    /* the blocks stay allocated (a few MiB in all): each class gets a page of
     * its own */
  }
  size_t large = SMALL_MAX + 1, span = (large + SLICE - 1) / SLICE * SLICE;
  char *a = malloc(large), *b = malloc(large);
  CHECK(a != NULL && b != NULL && owns(a) && owns(b), "malloc(%zu)", large);
  CHECK((uintptr_t)a % SLICE == 0 && (uintptr_t)b % SLICE == 0,
        "large blocks %p and %p do not start on a slice", (void *)a, (void *)b);
  CHECK(a + span <= b || b + span <= a, "large blocks %p and %p overlap",
        (void *)a, (void *)b);
  return NULL;
}

static void mode_stride(void) {
  pthread_t t;
  CHECK(pthread_create(&t, NULL, stride_thread, NULL) == 0, "pthread_create");
  pthread_join(t, NULL);
}

static void mode_boundaries(void) {
  check_request(0);
  for (int i = 0; i < nclasses; i++) {
    check_request(classes[i] - 1);
    check_request(classes[i]);
    check_request(classes[i] + 1);
  }
  for (size_t s = SMALL_MAX; s <= LARGE_MAX; s += SLICE) {
    check_request(s - 1);
    check_request(s);
    check_request(s + 1);
  }
  for (size_t n = SMALL_MAX - 8 * KIB; n <= LARGE_MAX + 8 * KIB; n += 4093)
    check_request(n);
  check_request(LARGE_MAX + HUGE_PAGE);
  check_request(1024 * KIB);
  check_request(2048 * KIB + 1);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: size_classes table|usable|stride|boundaries\n");
    return 2;
  }
  owns = (int (*)(const void *))dlsym(RTLD_DEFAULT, "hsmalloc_owns");
  stats_get =
      (int (*)(hsmalloc_stats_t *))dlsym(RTLD_DEFAULT, "hsmalloc_stats_get");
  if (owns == NULL || stats_get == NULL) {
    fprintf(
        stderr,
        "size_classes: not running on hsmalloc (LD_PRELOAD=libhsmalloc.so)\n");
    return 2;
  }
  derive_classes();
  const char *mode = argv[1];
  if (strcmp(mode, "table") == 0)
    mode_table();
  else if (strcmp(mode, "usable") == 0)
    mode_usable();
  else if (strcmp(mode, "stride") == 0)
    mode_stride();
  else if (strcmp(mode, "boundaries") == 0)
    mode_boundaries();
  else {
    fprintf(stderr, "size_classes: unknown mode %s\n", mode);
    return 2;
  }
  printf("ok %s classes=%d largest=%zu checks=%ld\n", mode, nclasses,
         classes[nclasses - 1], checks);
  return 0;
}
