/* chains.c — hsmalloc's chains (hsmalloc.h) checked operation by operation,
 * with the contents of every block. Linked with -lhsmalloc. `chains MODE` runs
 * one mode and prints "ok <checks>"; the misuse modes are expected to abort
 * with one line. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "hsmalloc.h"

static void fill(void *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    ((unsigned char *)p)[i] = (unsigned char)(seed + i * 7);
}
static int filled(const void *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    if (((const unsigned char *)p)[i] != (unsigned char)(seed + i * 7))
      return 0;
  return 1;
}
static int inside(const void *p, const void *buf, size_t size) {
  return (const char *)p >= (const char *)buf &&
         (const char *)p < (const char *)buf + size;
}
static void *map(size_t size) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED, "mmap %zu", size);
  return p;
}

static const size_t sizes[] = {0,     1,      8,      17,     20,   24,
                               100,   104,    500,    1000,   4096, 5000,
                               40000, 131072, 200000, 3 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Every operation on one chain, block contents checked after each. */
static void operations(hsmalloc_chain_t *c, void *buf, size_t bufsize) {
  void *p[NSIZES];
  for (size_t i = 0; i < NSIZES; i++) {
    if (buf && sizes[i] > bufsize / 4) {
      p[i] = NULL;
      continue;
    }
    p[i] = hsmalloc_chain_malloc(c, sizes[i]);
    CHECK(p[i] != NULL, "malloc %zu", sizes[i]);
    /* 16-aligned, except the packed sizes (17-128, remainder mod 16 of 1-8): 8
     */
    int packed = sizes[i] <= 8 ||
                 (sizes[i] >= 17 && sizes[i] <= 128 && (sizes[i] - 1) % 16 < 8);
    CHECK(((uintptr_t)p[i] & (packed ? 7 : 15)) == 0, "aligned %p (size %zu)",
          p[i], sizes[i]);
    if (packed && sizes[i] > 8)
      CHECK(malloc_usable_size(p[i]) == (sizes[i] + 7) / 8 * 8,
            "packed: %zu B for %zu", malloc_usable_size(p[i]), sizes[i]);
    CHECK(malloc_usable_size(p[i]) >= sizes[i], "usable %zu < %zu",
          malloc_usable_size(p[i]), sizes[i]);
    CHECK(hsmalloc_owns(p[i]), "owned %p", p[i]);
    if (buf)
      CHECK(inside(p[i], buf, bufsize), "%p in the buffer", p[i]);
    fill(p[i], sizes[i], (unsigned)i);
  }
  for (size_t i = 0; i < NSIZES; i++)
    if (p[i])
      CHECK(filled(p[i], sizes[i], (unsigned)i), "block %zu intact", i);
  /* calloc: zero even where a freed block is reused */
  for (size_t i = 0; i < NSIZES; i++) {
    if (!p[i])
      continue;
    hsmalloc_chain_free(c, p[i]);
    size_t n = sizes[i] / 4 + 1;
    unsigned *z = hsmalloc_chain_calloc(c, n, 4);
    CHECK(z != NULL, "calloc %zu", n * 4);
    for (size_t k = 0; k < n; k++)
      CHECK(z[k] == 0, "calloc'd word %zu of %zu", k, n);
    fill(z, n * 4, 3);
    p[i] = z;
  }
  /* realloc: grow and shrink keep the contents, the block stays in the chain */
  char *r = hsmalloc_chain_malloc(c, 24);
  fill(r, 24, 9);
  size_t have = 24;
  size_t steps[] = {100, 3000, 60000, 20, 150000, 50};
  for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
    if (buf && steps[k] > bufsize / 4)
      continue;
    char *q = hsmalloc_chain_realloc(c, r, steps[k]);
    CHECK(q != NULL, "realloc to %zu", steps[k]);
    size_t keep = have < steps[k] ? have : steps[k];
    CHECK(filled(q, keep, 9), "realloc to %zu kept %zu bytes", steps[k], keep);
    if (buf)
      CHECK(inside(q, buf, bufsize), "realloc'd block in the buffer");
    fill(q, steps[k], 9);
    r = q;
    have = steps[k];
  }
  /* plain realloc() of a chain block stays in the chain too */
  char *q = realloc(r, have + 5000);
  CHECK(q != NULL && filled(q, have, 9), "plain realloc kept the contents");
  if (buf)
    CHECK(inside(q, buf, bufsize), "plain realloc stays in the buffer");
  CHECK(hsmalloc_chain_realloc(c, q, 0) == NULL, "realloc to 0 frees");
  /* aligned allocation */
  for (size_t align = 1; align <= 65536; align *= 2) {
    size_t n = align * 3 + 1;
    if (buf && n > bufsize / 8)
      break;
    void *a = hsmalloc_chain_aligned_alloc(c, align, n);
    CHECK(a != NULL && ((uintptr_t)a & (align - 1)) == 0, "aligned %zu: %p",
          align, a);
    CHECK(malloc_usable_size(a) >= n, "aligned usable");
    fill(a, n, 5);
    CHECK(filled(a, n, 5), "aligned contents");
    if (align % 2)
      hsmalloc_chain_free(c, a);
    else
      free(a); /* plain free finds the block from an inner address */
  }
  errno = 0;
  CHECK(hsmalloc_chain_aligned_alloc(c, 24, 10) == NULL && errno == EINVAL,
        "align 24: EINVAL");
  for (size_t i = 0; i < NSIZES; i++)
    if (p[i]) {
      CHECK(filled(p[i], sizes[i] / 4 * 4 + 4, 3), "calloc'd block %zu intact",
            i);
      free(p[i]);
    }
}

static void mode_os(void) {
  hsmalloc_chain_t *c = hsmalloc_chain_create(NULL, 0, 0);
  CHECK(c != NULL, "create on OS memory: %s", strerror(errno));
  operations(c, NULL, 0);
  /* big blocks of their own mapping, aligned past its first 2 MiB: free() finds
   * them */
  for (size_t align = (size_t)1 << 20; align <= ((size_t)16 << 20);
       align *= 4) {
    char *a = hsmalloc_chain_aligned_alloc(c, align, 5 << 20);
    CHECK(a != NULL && ((uintptr_t)a & (align - 1)) == 0, "aligned %zu MiB",
          align >> 20);
    CHECK(hsmalloc_owns(a) && malloc_usable_size(a) >= (5 << 20),
          "owned, usable");
    fill(a + (4 << 20), 4096, 2);
    CHECK(filled(a + (4 << 20), 4096, 2), "big aligned contents");
    free(a);
  }
  hsmalloc_stats_t st;
  CHECK(hsmalloc_chain_stats(c, &st) == 0, "stats");
  CHECK(st.allocs == st.frees, "every block freed: %llu allocs, %llu frees",
        (unsigned long long)st.allocs, (unsigned long long)st.frees);
  hsmalloc_chain_destroy(c);
  /* the soft limit: 4 MiB holds two 1.5 MiB blocks' worth at most, then ENOMEM
   */
  c = hsmalloc_chain_create(NULL, 4 << 20, 0);
  int n = 0;
  while (hsmalloc_chain_malloc(c, 1 << 20) != NULL)
    CHECK(++n < 10, "the limit holds");
  CHECK(errno == ENOMEM && n >= 1 && n <= 4,
        "%d MiB blocks under a 4 MiB limit, then ENOMEM", n);
  hsmalloc_chain_reset(c);
  CHECK(hsmalloc_chain_malloc(c, 1 << 20) != NULL,
        "after reset the limit has room again");
  hsmalloc_chain_destroy(c);
}

static void mode_buffer(void) {
  size_t size = 1 << 20;
  char *buf = map(size);
  hsmalloc_chain_t *c = hsmalloc_chain_create(buf, size, 0);
  CHECK(c != NULL, "create on an mmap'd buffer: %s", strerror(errno));
  operations(c, buf, size);
  hsmalloc_chain_destroy(c);
  c = hsmalloc_chain_create(buf, size,
                            0); /* spans keep their class: start afresh */
  /* full: NULL and ENOMEM, never memory outside the buffer */
  size_t n = 0;
  void *last = NULL, *p;
  errno = 0;
  while ((p = hsmalloc_chain_malloc(c, 1000)) != NULL) {
    CHECK(inside(p, buf, size), "%p in the buffer", p);
    last = p;
    n++;
  }
  CHECK(errno == ENOMEM, "a full chain sets ENOMEM (errno %d)", errno);
  CHECK(n > 700 && n < 1024, "%zu blocks of 1000 B in 1 MiB", n);
  CHECK(hsmalloc_chain_malloc(c, 5000) == NULL, "still full for other sizes");
  free(last);
  p = hsmalloc_chain_malloc(c, 1000);
  CHECK(p == last, "the freed block is reused (%p, %p)", p, last);
  hsmalloc_chain_destroy(c);
  munmap(buf, size);
}

/* A buffer that is itself a heap block, and one inside static memory: neither
 * starts on a 2 MiB boundary; heap blocks next to them are still freed as heap
 * blocks. */
static char static_buf[1024 * 1024] __attribute__((aligned(16)));
static void mode_unaligned(void) {
  void *neighbours[64];
  for (int i = 0; i < 64; i++)
    neighbours[i] = malloc(300);
  char *buf = malloc(1200 * 1024 + 16);
  CHECK(buf != NULL, "heap buffer");
  hsmalloc_chain_t *c = hsmalloc_chain_create(buf + 16, 1200 * 1024, 0);
  CHECK(c != NULL, "create on a heap block: %s", strerror(errno));
  operations(c, buf + 16, 1200 * 1024);
  for (int i = 0; i < 64; i++) {
    memset(neighbours[i], i, 300);
    CHECK(!inside(neighbours[i], buf, 1200 * 1024 + 16), "neighbour outside");
    CHECK(malloc_usable_size(neighbours[i]) >= 300, "neighbour's size");
    /* realloc's misuse checks read the unit's kind: a chain's map, a heap block
     * under it */
    char *grown = realloc(neighbours[i], 600);
    CHECK(grown != NULL && grown[299] == (char)i,
          "neighbour %d grown by realloc", i);
    free(grown);
  }
  hsmalloc_chain_t *s = hsmalloc_chain_create(static_buf, sizeof static_buf, 0);
  CHECK(s != NULL, "create on static memory: %s", strerror(errno));
  operations(s, static_buf, sizeof static_buf);
  hsmalloc_chain_destroy(s);
  hsmalloc_chain_destroy(c);
  CHECK(malloc_usable_size(buf) >= 1200 * 1024 + 16,
        "the buffer is a heap block again");
  free(buf);
}

/* ---- other threads freeing an unshared chain's blocks ---- */
#define REMOTE_N 4000
static void *remote_blocks[REMOTE_N];
static void *free_half(void *arg) {
  int start = (int)(intptr_t)arg;
  for (int i = start; i < REMOTE_N; i += 2) {
    CHECK(filled(remote_blocks[i], 64, (unsigned)i),
          "block %d intact in the freeing thread", i);
    free(remote_blocks[i]);
  }
  return NULL;
}
static void mode_remote(void) {
  hsmalloc_chain_t *c = hsmalloc_chain_create(NULL, 0, 0);
  for (int i = 0; i < REMOTE_N; i++) {
    remote_blocks[i] = hsmalloc_chain_malloc(c, 64);
    fill(remote_blocks[i], 64, (unsigned)i);
  }
  pthread_t t[2];
  for (int k = 0; k < 2; k++)
    pthread_create(&t[k], NULL, free_half, (void *)(intptr_t)k);
  for (int k = 0; k < 2; k++)
    pthread_join(t[k], NULL);
  hsmalloc_stats_t st;
  hsmalloc_chain_stats(c, &st);
  CHECK(st.allocs == REMOTE_N && st.frees == 0,
        "remote frees wait for the owner (%llu frees)",
        (unsigned long long)st.frees);
  /* the owner takes them back when its span runs out: everything is reused */
  for (int i = 0; i < REMOTE_N; i++) {
    void *p = hsmalloc_chain_malloc(c, 64);
    CHECK(p != NULL, "alloc %d", i);
    fill(p, 64, 1);
  }
  hsmalloc_chain_stats(c, &st);
  CHECK(st.remote_frees == REMOTE_N && st.frees == REMOTE_N,
        "the owner drained %llu remote frees",
        (unsigned long long)st.remote_frees);
  CHECK(st.pages <= 2 * (REMOTE_N * 64 / 4096) + 2,
        "freed blocks were reused: %llu spans", (unsigned long long)st.pages);
  hsmalloc_chain_destroy(c);
}

/* ---- a shared chain used by several threads at once ---- */
static hsmalloc_chain_t *shared;
static void *shared_worker(void *arg) {
  unsigned seed = (unsigned)(intptr_t)arg;
  void *held[64] = {0};
  size_t held_n[64] = {0};
  for (int round = 0; round < 20000; round++) {
    int k = (int)((seed * 31u + (unsigned)round * 17u) % 64u);
    if (held[k]) {
      CHECK(filled(held[k], held_n[k], seed + (unsigned)k),
            "thread %u block %d intact", seed, k);
      if (round % 3)
        hsmalloc_chain_free(shared, held[k]);
      else
        free(held[k]);
    }
    held_n[k] = 16 + (size_t)((round * 37) % 2000);
    held[k] = hsmalloc_chain_malloc(shared, held_n[k]);
    CHECK(held[k] != NULL, "shared alloc");
    fill(held[k], held_n[k], seed + (unsigned)k);
  }
  for (int k = 0; k < 64; k++)
    free(held[k]);
  return NULL;
}
static void mode_shared(void) {
  shared = hsmalloc_chain_create(NULL, 0, HSMALLOC_CHAIN_SHARED);
  pthread_t t[4];
  for (int k = 0; k < 4; k++)
    pthread_create(&t[k], NULL, shared_worker, (void *)(intptr_t)k);
  for (int k = 0; k < 4; k++)
    pthread_join(t[k], NULL);
  hsmalloc_stats_t st;
  hsmalloc_chain_stats(shared, &st);
  CHECK(st.allocs == 4 * 20000 && st.frees == st.allocs,
        "%llu allocs, %llu frees", (unsigned long long)st.allocs,
        (unsigned long long)st.frees);
  hsmalloc_chain_destroy(shared);
}

/* ---- blocks handed out inside, in the later pages of a span ----
 * Class 3328 cuts spans of 5 pages (6 blocks). Block 0 from malloc fixes the
 * span's start; aligned_alloc(512, 2800) takes the same class (2800 + 496), so
 * block k starts at b0 + 3328 k and is handed out at the next multiple of 512:
 * inside its block for some k, in pages 0-4 of the span. Every page of the span
 * must say so: a free of an inside pointer that took it for a block start would
 * put it on the list, and the next block of the class would overlap its
 * neighbour. */
static void mode_aligned_pages(void) {
  hsmalloc_chain_t *c = hsmalloc_chain_create(NULL, 0, 0);
  CHECK(c != NULL, "create: %s", strerror(errno));
  char *b[6];
  b[0] = hsmalloc_chain_malloc(c, 3300);
  for (int k = 1; k < 6; k++)
    b[k] = hsmalloc_chain_aligned_alloc(c, 512, 2800);
  int later = 0;
  for (int k = 0; k < 6; k++) {
    uintptr_t start = (uintptr_t)b[0] + 3328 * (uintptr_t)k;
    uintptr_t at = k == 0 ? start : (start + 511) & ~(uintptr_t)511;
    CHECK((uintptr_t)b[k] == at, "block %d at +%td", k, b[k] - b[0]);
    CHECK(malloc_usable_size(b[k]) == start + 3328 - at, "block %d usable %zu",
          k, malloc_usable_size(b[k]));
    if (at != start && (at - (uintptr_t)b[0]) / 4096 > 0)
      later++;
    fill(b[k], 2800, (unsigned)k);
  }
  CHECK(later >= 2, "%d blocks handed out inside in later pages of the span",
        later);
  for (int k = 1; k < 6; k++) {
    uintptr_t start = (uintptr_t)b[0] + 3328 * (uintptr_t)k;
    if ((uintptr_t)b[k] == start)
      continue;
    if (k % 2)
      hsmalloc_chain_free(c, b[k]);
    else
      free(b[k]); /* plain free() takes the chain's route */
    char *again = hsmalloc_chain_malloc(c, 3300);
    CHECK((uintptr_t)again == start, "block %d back from its start: +%td", k,
          again - b[0]);
    b[k] = again;
    fill(again, 3300, (unsigned)k);
  }
  for (int k = 0; k < 6; k++)
    CHECK(filled(b[k], 2800, (unsigned)k), "block %d intact", k);
  hsmalloc_chain_destroy(c);
}

/* ---- free-all, then reuse ---- */
static void mode_reset(void) {
  size_t size = 512 * 1024;
  char *buf = map(size);
  hsmalloc_chain_t *c = hsmalloc_chain_create(buf, size, 0);
  void *first[3][100];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 100; i++) {
      first[round][i] = hsmalloc_chain_malloc(c, 40 + (size_t)i * 30);
      CHECK(first[round][i] != NULL, "round %d block %d", round, i);
      fill(first[round][i], 40 + (size_t)i * 30, (unsigned)(round + i));
    }
    for (int i = 0; i < 100; i++)
      CHECK(filled(first[round][i], 40 + (size_t)i * 30, (unsigned)(round + i)),
            "intact");
    /* fill the rest: a reset must give all of it back */
    while (hsmalloc_chain_malloc(c, 3000) != NULL) {
    }
    hsmalloc_stats_t st;
    hsmalloc_chain_stats(c, &st);
    CHECK(st.allocated_now > size / 2, "full before the reset: %llu live bytes",
          (unsigned long long)st.allocated_now);
    hsmalloc_chain_reset(c);
    hsmalloc_chain_stats(c, &st);
    CHECK(st.allocated_now == 0 && st.allocs == st.frees,
          "nothing live after reset");
    if (round > 0)
      for (int i = 0; i < 100; i++)
        CHECK(first[round][i] == first[0][i],
              "round %d reuses the same addresses", round);
  }
  hsmalloc_chain_t *os = hsmalloc_chain_create(NULL, 0, 0);
  void *a = hsmalloc_chain_malloc(os, 100),
       *big = hsmalloc_chain_malloc(os, 5 << 20);
  CHECK(big != NULL, "a big block of its own mapping");
  fill(big, 5 << 20, 1);
  hsmalloc_chain_reset(os);
  CHECK(!hsmalloc_owns(big), "a reset unmaps a big block's own mapping");
  CHECK(hsmalloc_chain_malloc(os, 100) == a, "and reuses the first segment");
  hsmalloc_chain_destroy(os);
  hsmalloc_chain_destroy(c);
  munmap(buf, size);
}

/* ---- the default switch ---- */
static char *dflt_buf;
static size_t dflt_size;
static int allocating_cmp(const void *x, const void *y) {
  char *a = strdup(*(char *const *)x),
       *b = strdup(*(char *const *)y); /* allocates in scope */
  CHECK(inside(a, dflt_buf, dflt_size),
        "the comparator's strdup is in the chain");
  int r = strcmp(a, b);
  free(a);
  free(b);
  return r;
}
static pthread_barrier_t in_scope, checked;
static void *other_thread(void *arg) {
  (void)arg;
  pthread_barrier_wait(&in_scope);
  void *p = malloc(100);
  CHECK(!inside(p, dflt_buf, dflt_size),
        "another thread's malloc is not in the chain");
  free(p);
  pthread_barrier_wait(&checked);
  return NULL;
}
static void mode_default(void) {
  pthread_t t;
  pthread_barrier_init(&in_scope, NULL, 2);
  pthread_barrier_init(&checked, NULL, 2);
  pthread_create(&t, NULL, other_thread, NULL);
  dflt_size = 1 << 20;
  dflt_buf = map(dflt_size);
  char *buf2 = map(dflt_size);
  hsmalloc_chain_t *c = hsmalloc_chain_create(dflt_buf, dflt_size, 0);
  hsmalloc_chain_t *c2 = hsmalloc_chain_create(buf2, dflt_size, 0);
  char *before = malloc(50);
  CHECK(hsmalloc_chain_set_default(c) == NULL,
        "the previous default is the heap");
  char *s = strdup("chains hold this string");
  CHECK(inside(s, dflt_buf, dflt_size) &&
            strcmp(s, "chains hold this string") == 0,
        "strdup in scope");
  void *m = malloc(5000), *z = calloc(10, 100), *big = malloc(300000),
       *al = NULL;
  CHECK(posix_memalign(&al, 256, 1000) == 0, "posix_memalign");
  CHECK(inside(m, dflt_buf, dflt_size) && inside(z, dflt_buf, dflt_size) &&
            inside(big, dflt_buf, dflt_size) && inside(al, dflt_buf, dflt_size),
        "malloc, calloc, a big block, posix_memalign in scope");
  CHECK(((uintptr_t)al & 255) == 0, "aligned in scope");
  void *m24 = malloc(24);
  CHECK(inside(m24, dflt_buf, dflt_size) && ((uintptr_t)m24 & 15) == 0 &&
            malloc_usable_size(m24) == 32,
        "malloc in scope keeps malloc's 16-byte alignment (no packed class)");
  free(m24);
  for (int i = 0; i < 1000; i++)
    CHECK(((char *)z)[i] == 0, "calloc zero");
  char *words[] = {"pear", "apple", "fig", "kiwi", "banana", "cherry"};
  qsort(words, 6, sizeof words[0], allocating_cmp);
  CHECK(strcmp(words[0], "apple") == 0 && strcmp(words[5], "pear") == 0,
        "qsort sorted");
  pthread_barrier_wait(
      &in_scope); /* the other thread allocates while c is our default */
  pthread_barrier_wait(&checked);
  /* nested: c2 inside c */
  CHECK(hsmalloc_chain_set_default(c2) == c, "the previous default is c");
  char *s2 = strdup("nested");
  CHECK(inside(s2, buf2, dflt_size), "nested default");
  before =
      realloc(before, 4000); /* a heap block moves into the default chain */
  CHECK(inside(before, buf2, dflt_size),
        "realloc of a heap block moves it into the scope's chain");
  CHECK(hsmalloc_chain_set_default(c) == c2,
        "restoring returns the inner chain");
  char *s3 = strdup("back in c");
  CHECK(inside(s3, dflt_buf, dflt_size), "back in c");
  /* out of memory in scope: NULL and ENOMEM, never the heap */
  errno = 0;
  CHECK(malloc(2 << 20) == NULL && errno == ENOMEM,
        "a full default chain gives ENOMEM");
  CHECK(hsmalloc_chain_set_default(NULL) == c, "back to the heap");
  pthread_join(t, NULL);
  char *h = malloc(100);
  CHECK(!inside(h, dflt_buf, dflt_size) && !inside(h, buf2, dflt_size),
        "heap again after the scope");
  CHECK(strcmp(s, "chains hold this string") == 0 && strcmp(s2, "nested") == 0,
        "contents kept");
  free(s);
  free(s2);
  free(s3);
  free(m);
  free(z);
  free(big);
  free(al);
  free(before);
  free(h);
  hsmalloc_stats_t st;
  hsmalloc_chain_stats(c, &st);
  CHECK(st.allocs == st.frees, "every block of c came back: %llu/%llu",
        (unsigned long long)st.allocs, (unsigned long long)st.frees);
  hsmalloc_chain_destroy(c2);
  hsmalloc_chain_destroy(c);
}

/* ---- pinned and shared memory ---- */
static void mode_mlock(void) {
  size_t size = 2 << 20;
  char *buf = map(size);
  CHECK(mlock(buf, size) == 0, "mlock: %s", strerror(errno));
  hsmalloc_chain_t *c = hsmalloc_chain_create(buf, size, HSMALLOC_CHAIN_SHARED);
  CHECK(c != NULL, "create on mlock'd memory");
  operations(c, buf, size);
  hsmalloc_chain_destroy(c);
  munlock(buf, size);
  munmap(buf, size);
}

static void mode_shm(void) {
  char name[64];
  snprintf(name, sizeof name, "/hsmalloc-chain-test-%d", (int)getpid());
  int fd = shm_open(name, O_CREAT | O_RDWR | O_EXCL, 0600);
  CHECK(fd >= 0, "shm_open: %s", strerror(errno));
  size_t size = 1 << 20;
  CHECK(ftruncate(fd, (off_t)size) == 0, "ftruncate");
  char *buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  char *view = mmap(NULL, size, PROT_READ, MAP_SHARED, fd,
                    0); /* a second view, elsewhere */
  CHECK(buf != MAP_FAILED && view != MAP_FAILED, "mmap shm");
  shm_unlink(name);
  hsmalloc_chain_t *c = hsmalloc_chain_create(buf, size, 0);
  CHECK(c != NULL, "create on shm_open'd memory");
  operations(c, buf, size);
  char *msg = hsmalloc_chain_malloc(c, 64);
  strcpy(msg, "seen through the other mapping");
  CHECK(strcmp(view + (msg - buf), "seen through the other mapping") == 0,
        "the block is shared memory");
  hsmalloc_chain_destroy(c);
  munmap(view, size);
  munmap(buf, size);
  close(fd);
}

/* ---- bad input with a result ---- */
static void mode_bad_args(void) {
  static char small[1024] __attribute__((aligned(16)));
  static char ok[HSMALLOC_CHAIN_MIN_SIZE] __attribute__((aligned(16)));
  errno = 0;
  CHECK(hsmalloc_chain_create(ok + 8, sizeof ok - 8, 0) == NULL &&
            errno == EINVAL,
        "misaligned: EINVAL");
  errno = 0;
  CHECK(hsmalloc_chain_create(ok, 0, 0) == NULL && errno == EINVAL,
        "size 0: EINVAL");
  errno = 0;
  CHECK(hsmalloc_chain_create(NULL, 0, 8) == NULL && errno == EINVAL,
        "unknown flag: EINVAL");
  errno = 0;
  CHECK(hsmalloc_chain_create(small, sizeof small, 0) == NULL &&
            errno == ENOSPC,
        "too small: ENOSPC");
  hsmalloc_chain_t *c = hsmalloc_chain_create(ok, sizeof ok, 0);
  CHECK(c != NULL, "the documented minimum works: %s", strerror(errno));
  void *p = hsmalloc_chain_malloc(c, 100);
  CHECK(inside(p, ok, sizeof ok), "a block in the smallest buffer");
  errno = 0;
  CHECK(hsmalloc_chain_create(ok + 4096, 4096 * 3, 0) == NULL && errno == EBUSY,
        "overlap: EBUSY");
  errno = 0;
  CHECK(hsmalloc_chain_stats(c, NULL) == -1 && errno == EINVAL,
        "stats into NULL: EINVAL");
  errno = 0;
  CHECK(hsmalloc_chain_malloc(c, 1 << 20) == NULL && errno == ENOMEM,
        "too big: ENOMEM");
  errno = 0;
  CHECK(hsmalloc_chain_calloc(c, SIZE_MAX / 2, 4) == NULL && errno == ENOMEM,
        "calloc overflow");
  hsmalloc_chain_free(c, NULL); /* nothing */
  hsmalloc_chain_destroy(NULL);
  hsmalloc_chain_reset(NULL);
  hsmalloc_chain_destroy(c);
  /* the buffer is plain memory again; a new chain may take it */
  c = hsmalloc_chain_create(ok, sizeof ok, 0);
  CHECK(c != NULL, "a destroyed chain's buffer can be reused");
  hsmalloc_chain_destroy(c);
}

/* ---- misuse: each aborts with one line ---- */
static hsmalloc_chain_t *victim;
static void *thread_alloc(void *arg) {
  (void)arg;
  hsmalloc_chain_malloc(victim, 10);
  return NULL;
}
static void *thread_reset(void *arg) {
  (void)arg;
  hsmalloc_chain_reset(victim);
  return NULL;
}
static void *thread_default(void *arg) {
  (void)arg;
  hsmalloc_chain_set_default(victim);
  pause();
  return NULL;
}
static void mode_misuse(const char *what) {
  hsmalloc_chain_t *a = hsmalloc_chain_create(NULL, 0, 0),
                   *b = hsmalloc_chain_create(NULL, 0, 0);
  void *pa = hsmalloc_chain_malloc(a, 10);
  victim = a;
  pthread_t t;
  if (strcmp(what, "free-other-chain") == 0)
    hsmalloc_chain_free(b, pa);
  else if (strcmp(what, "free-not-chain") == 0)
    hsmalloc_chain_free(a, malloc(10));
  /* in the chain's own segment, below its pages: its bookkeeping */
  else if (strcmp(what, "free-chain-header") == 0)
    hsmalloc_chain_free(a, a);
  else if (strcmp(what, "alloc-other-thread") == 0)
    pthread_create(&t, NULL, thread_alloc, NULL), pthread_join(t, NULL);
  else if (strcmp(what, "reset-other-thread") == 0)
    pthread_create(&t, NULL, thread_reset, NULL), pthread_join(t, NULL);
  else if (strcmp(what, "destroyed") ==
           0) { /* a chain in a caller's buffer: still readable */
    static char buf[HSMALLOC_CHAIN_MIN_SIZE] __attribute__((aligned(16)));
    hsmalloc_chain_t *c = hsmalloc_chain_create(buf, sizeof buf, 0);
    hsmalloc_chain_destroy(c);
    hsmalloc_chain_malloc(c, 1);
  } else if (strcmp(what, "destroy-default-elsewhere") == 0) {
    victim = hsmalloc_chain_create(NULL, 0, HSMALLOC_CHAIN_SHARED);
    pthread_create(&t, NULL, thread_default, NULL);
    usleep(100000);
    hsmalloc_chain_destroy(victim);
  }
  printf("no abort\n");
  exit(3);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "os") == 0)
    mode_os();
  else if (strcmp(mode, "buffer") == 0)
    mode_buffer();
  else if (strcmp(mode, "unaligned") == 0)
    mode_unaligned();
  else if (strcmp(mode, "remote") == 0)
    mode_remote();
  else if (strcmp(mode, "shared") == 0)
    mode_shared();
  else if (strcmp(mode, "reset") == 0)
    mode_reset();
  else if (strcmp(mode, "aligned-pages") == 0)
    mode_aligned_pages();
  else if (strcmp(mode, "default") == 0)
    mode_default();
  else if (strcmp(mode, "mlock") == 0)
    mode_mlock();
  else if (strcmp(mode, "shm") == 0)
    mode_shm();
  else if (strcmp(mode, "bad-args") == 0)
    mode_bad_args();
  else if (strncmp(mode, "misuse:", 7) == 0)
    mode_misuse(mode + 7);
  else {
    fprintf(stderr, "chains: unknown mode '%s'\n", mode);
    return 2;
  }
  printf("ok %ld\n", checks);
  return 0;
}
