/* A freed block of a class above 8 KiB stays in its thread's cache, and its
 * page with it, until 16 to 31 of the heap's allocation slow paths pass without
 * an allocation of the class; then both go back. In a thread of its own (a heap
 * whose slow paths are all this program's): a 100000-byte block (class 106496,
 * a page of 5 slices) is written and freed (onto the cache); 200000-byte blocks
 * (large: a slow path each) are allocated and freed; the 100000-byte block is
 * taken again after 10 of them (the same block, from the cache), which starts
 * the count again; 15 more leave the block and its page kept, 31 give them
 * back; a large block of 5 slices then takes the page's slices. Prints, one
 * "name value" a line: kept, after10, after15, after31   the heap's page bytes
 * then same                              1 when the second 100000-byte block is
 * the first reuse                             1 when the 300000-byte block
 * starts where the page did resident15, resident31            resident 4 KiB
 * pages of the first block's 100000 bytes (mincore) after 15 and 31 large
 * blocks */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#include "check.h"
#include "hsmalloc.h"

#define BLOCK 100000
#define LARGE 200000

static long figure[16];
static const char *name[16];
static int n;

static void record(const char *what, long value) {
  name[n] = what;
  figure[n++] = value;
}

static long page_bytes(void) {
  hsmalloc_heap_stats_t s;
  CHECK(hsmalloc_heap_stats_self(&s) == 0, "hsmalloc_heap_stats_self");
  return (long)s.page_bytes;
}

static long resident(uintptr_t p) { /* an address: the block is free */
  unsigned char vec[32];
  uintptr_t start = p & ~(uintptr_t)4095;
  size_t pages = (p + BLOCK - start + 4095) / 4096;
  CHECK(mincore((void *)start, pages * 4096, vec) == 0, "mincore");
  long r = 0;
  for (size_t i = 0; i < pages; i++)
    r += vec[i] & 1;
  return r;
}

static void large_blocks(int count) {
  for (int i = 0; i < count; i++) {
    char *r = malloc(LARGE);
    CHECK(r != NULL, "malloc(%d)", LARGE);
    r[0] = 1;
    free(r);
  }
}

static void *worker(void *arg) {
  (void)arg;
  char *p = malloc(BLOCK);
  CHECK(p != NULL, "malloc(%d)", BLOCK);
  for (size_t i = 0; i < BLOCK; i += 4096)
    ((volatile char *)p)[i] = 1; /* (a memset before free is dropped) */
  uintptr_t at = (uintptr_t)p;
  free(p);
  record("kept", page_bytes());
  large_blocks(10);
  record("after10", page_bytes());
  char *q = malloc(BLOCK);
  record("same", (uintptr_t)q == at);
  free(q);
  large_blocks(15);
  record("after15", page_bytes());
  record("resident15", resident(at));
  large_blocks(16);
  record("after31", page_bytes());
  record("resident31", resident(at));
  char *s = malloc(300000);
  record("reuse", (uintptr_t)s == at);
  free(s);
  /* the edge: class 8192 (a slice of 8 blocks) keeps its cached block and page
   * for good, class 9216 (8193 bytes: 7 blocks a slice) only for 16 to 31 slow
   * paths */
  char *a = malloc(8192), *b = malloc(8193);
  CHECK(a != NULL && b != NULL, "malloc(8192), malloc(8193)");
  a[0] = b[0] = 1;
  free(a);
  free(b);
  record("edge_kept", page_bytes());
  large_blocks(31);
  record("edge_after31", page_bytes());
  return NULL;
}

int main(void) {
  pthread_t t;
  CHECK(pthread_create(&t, NULL, worker, NULL) == 0, "pthread_create");
  CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  for (int i = 0; i < n; i++)
    printf("%s %ld\n", name[i], figure[i]);
  return 0;
}
