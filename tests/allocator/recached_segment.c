/* A segment taken back from the cache of empty segments keeps its resident slices
 * until the decay delay says they sat idle long enough. A fresh thread (a heap of its
 * own) writes a 1.5 MiB block (24 slices of a new segment) and frees it: the segment,
 * empty, goes to the cache resident. A small block then takes that segment back;
 * the 23 resident slices it does not use are free. Then 300 rounds of malloc and free
 * of a 1 MiB block (slow paths, so the heap's maintenance with its decay pass runs)
 * write into those slices. Prints "purged B": the bytes given back to the OS during
 * the rounds. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"

#define FIRST ((size_t)1536 << 10)
#define ROUND ((size_t)1 << 20)

static long long purged;

static long long purged_bytes(void) {
  hsmalloc_stats_t st;
  CHECK(hsmalloc_stats_get(&st) == 0, "hsmalloc_stats_get");
  return (long long)st.purged_bytes;
}

static void *worker(void *arg) {
  (void)arg;
  char *first = malloc(FIRST);
  CHECK(first != NULL, "malloc(%zu)", FIRST);
  memset(first, 1, FIRST);
  free(first);
  char *small = malloc(64);
  CHECK(small != NULL, "malloc(64)");
  memset(small, 2, 64);
  long long p0 = purged_bytes();
  for (int i = 0; i < 300; i++) {
    char *p = malloc(ROUND);
    CHECK(p != NULL, "malloc(%zu)", ROUND);
    memset(p, 3, ROUND);
    free(p);
  }
  purged = purged_bytes() - p0;
  free(small);
  return NULL;
}

int main(void) {
  pthread_t t;
  CHECK(pthread_create(&t, NULL, worker, NULL) == 0, "pthread_create");
  CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  printf("purged %lld\n", purged);
  return 0;
}
