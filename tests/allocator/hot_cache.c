/* A hot class's cache budget in a heap made before the class had a size. The
 * main thread's heap is made in the library's constructor, before
 * HSMALLOC_HOT_SIZES gives a hot slot its size (hsm_cache_limit of the slot's
 * class is 0 until then); a producer thread then allocates N blocks of the hot
 * size, and the main thread (which never allocates that size) frees them all:
 * its cache for the class must go home in batches, not hold every block until
 * the thread exits. Prints "consumer remote_frees F remote_pushes P" */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"

#define N 700
#define SIZE 520

static void *blocks[N];

static void *producer(void *arg) {
  (void)arg;
  for (int i = 0; i < N; i++) {
    blocks[i] = malloc(SIZE);
    CHECK(blocks[i] != NULL, "malloc");
    memset(blocks[i], 1, SIZE);
  }
  return NULL;
}

int main(void) {
  hsmalloc_heap_stats_t before, after;
  CHECK(hsmalloc_heap_stats_self(&before) == 0, "no heap");
  pthread_t p;
  CHECK(pthread_create(&p, NULL, producer, NULL) == 0, "pthread_create");
  CHECK(pthread_join(p, NULL) == 0,
        "pthread_join"); /* its heap is abandoned, not gone */
  for (int i = 0; i < N; i++)
    free(blocks[i]);
  CHECK(hsmalloc_heap_stats_self(&after) == 0, "no heap");
  printf("consumer remote_frees %llu remote_pushes %llu\n",
         (unsigned long long)(after.remote_frees - before.remote_frees),
         (unsigned long long)(after.remote_pushes - before.remote_pushes));
  return 0;
}
