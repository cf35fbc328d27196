/* A class above 8 KiB keeps one freed block in the thread's cache: another
 * heap's block freed after the thread's own sends the own one home, and its
 * page, empty then, is kept as the class's current page for 16 slow paths only.
 * A worker thread writes and frees a 100000-byte block (onto its cache; its
 * page, 5 slices, stays in use), then frees the main thread's 100000-byte block
 * (the cache's one block now: the worker's goes back to its page), then
 * allocates and frees 16 large blocks (a slow path each), then takes a
 * 100000-byte block again. Prints "name value" lines:
 *   kept, after16   the worker heap's page bytes after its first free and the
 * 16th large block from_cache      1 when the last 100000-byte block is the
 * main thread's (the cache) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "hsmalloc.h"

#define BLOCK 100000
#define LARGE 200000

static char *theirs;
static long kept, after16, from_cache;

static long page_bytes(void) {
  hsmalloc_heap_stats_t s;
  CHECK(hsmalloc_heap_stats_self(&s) == 0, "hsmalloc_heap_stats_self");
  return (long)s.page_bytes;
}

static void *worker(void *arg) {
  (void)arg;
  char *p = malloc(BLOCK);
  CHECK(p != NULL, "malloc(%d)", BLOCK);
  for (size_t i = 0; i < BLOCK; i += 4096)
    ((volatile char *)p)[i] = 1;
  free(p);
  kept = page_bytes();
  free(theirs); /* onto this thread's cache, which sends the worker's block home
                 */
  for (int i = 0; i < 16; i++) {
    char *r = malloc(LARGE);
    CHECK(r != NULL, "malloc(%d)", LARGE);
    r[0] = 1;
    free(r);
  }
  after16 = page_bytes();
  char *q = malloc(BLOCK);
  from_cache = q == theirs;
  free(q);
  return NULL;
}

int main(void) {
  theirs = malloc(BLOCK);
  CHECK(theirs != NULL, "malloc(%d)", BLOCK);
  theirs[0] = 1;
  pthread_t t;
  CHECK(pthread_create(&t, NULL, worker, NULL) == 0, "pthread_create");
  CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  printf("kept %ld\nafter16 %ld\nfrom_cache %ld\n", kept, after16, from_cache);
  return 0;
}
