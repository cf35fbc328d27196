/* A thread freeing another thread's blocks keeps them in its cache for the
 * class, and sends them home in batches. The producer (heap 1) allocates N
 * blocks of 64 bytes; then, one after the other, two consumers free half of
 * them each and print their own figures (hsmalloc_heap_stats_self) before
 * exiting: "NAME remote_frees F remote_pushes P" consumer "only" frees and
 * never allocates 64 bytes; consumer "allocating" first allocates (and frees)
 * one block of 64 bytes itself. The second adopts the heap the first left (heap
 * 2), whose cache went home at the first's exit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"
#include "stages.h"

#define N 2048

static void *blocks[N];

static void *producer(void *arg) {
  (void)arg;
  for (int i = 0; i < N; i++) {
    blocks[i] = malloc(64);
    CHECK(blocks[i] != NULL, "malloc");
    memset(blocks[i], 1, 64);
  }
  set_stage(1);
  wait_stage(3); /* both consumers are done */
  return NULL;
}

static void *consumer(void *arg) {
  int allocating = arg != NULL;
  if (allocating) {
    char *volatile p =
        malloc(64); /* volatile: the compiler may not elide the pair */
    p[0] = 1;
    free(p);
  }
  int first = allocating ? N / 2 : 0;
  for (int i = first; i < first + N / 2; i++)
    free(blocks[i]);
  hsmalloc_heap_stats_t me;
  CHECK(hsmalloc_heap_stats_self(&me) == 0, "no heap");
  printf("%s remote_frees %llu remote_pushes %llu\n",
         allocating ? "allocating" : "only",
         (unsigned long long)me.remote_frees,
         (unsigned long long)me.remote_pushes);
  return NULL;
}

int main(void) {
  pthread_t p, c;
  CHECK(pthread_create(&p, NULL, producer, NULL) == 0, "pthread_create");
  wait_stage(1);
  CHECK(pthread_create(&c, NULL, consumer, NULL) == 0, "pthread_create");
  CHECK(pthread_join(c, NULL) == 0, "pthread_join");
  fflush(stdout);
  set_stage(2);
  CHECK(pthread_create(&c, NULL, consumer, (void *)1) == 0, "pthread_create");
  CHECK(pthread_join(c, NULL) == 0, "pthread_join");
  set_stage(3);
  CHECK(pthread_join(p, NULL) == 0, "pthread_join");
  return 0;
}
