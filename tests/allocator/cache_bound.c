/* The bound of a thread's cache of a 16-byte class: a new thread allocates N blocks of
 * 16 bytes, frees them all, then allocates N again; it prints how many of the second
 * N left the fast path (cache refills), for N = 1024, 2048 and 2049:
 * "slow1024 S slow2048 S slow2049 S". The blocks the cache keeps come back without a
 * slow path; those its flushes sent back to their page need a refill. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "hsmalloc.h"

#define MAXN 2049
#define SIZE 16

static void *blocks[MAXN];

static void *round_trip(void *arg) {
  int n = *(int *)arg;
  for (int i = 0; i < n; i++) {
    blocks[i] = malloc(SIZE);
    CHECK(blocks[i] != NULL, "malloc(%d)", SIZE);
  }
  for (int i = 0; i < n; i++)
    free(blocks[i]);
  hsmalloc_heap_stats_t before, after;
  CHECK(hsmalloc_heap_stats_self(&before) == 0, "no heap");
  for (int i = 0; i < n; i++) {
    blocks[i] = malloc(SIZE);
    CHECK(blocks[i] != NULL, "malloc(%d)", SIZE);
  }
  CHECK(hsmalloc_heap_stats_self(&after) == 0, "no heap");
  printf("slow%d %llu\n", n, (unsigned long long)(after.slow_allocs - before.slow_allocs));
  for (int i = 0; i < n; i++)
    free(blocks[i]);
  return NULL;
}

int main(void) {
  static int counts[] = {1024, 2048, 2049};
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, round_trip, &counts[k]) == 0, "pthread_create");
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  }
  return 0;
}
