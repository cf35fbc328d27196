/* A page of a class above 8 KiB given back to the OS with its slices (purge.c,
 * hsm_purge_page_gone), and the same class made again. In a thread of its own
 * (a heap whose slow paths are all this program's), ROUNDS times: a block of
 * 12,288 bytes (its class's only page) is written and freed; then 40 rounds of
 * two blocks of 16,384 bytes, written and freed (each round one slow path, as
 * the second block finds the class's cache of one block empty), so that the
 * class of 12,288 bytes, idle for a sweep of the caches, sends its block home
 * and its page goes back to its segment; the next round's block makes the page
 * again.
 *
 * churn: the next round follows at once (the page made again within
 * microseconds). apart: 30 ms pass between a page's going and the next round
 * (nanosleep). Prints "purges N": the purges (madvise) the process made over
 * the rounds (hsmalloc_stats_get). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "hsmalloc.h"

#define ROUNDS 20
#define BLOCK 12288
#define OTHER 16384

static int apart;
static long purges;

static uint64_t purges_now(void) {
  hsmalloc_stats_t s;
  CHECK(hsmalloc_stats_get(&s) == 0, "hsmalloc_stats_get");
  return s.purges;
}

static void *rounds(void *arg) {
  (void)arg;
  uint64_t before = purges_now();
  for (int r = 0; r < ROUNDS; r++) {
    void *b = malloc(BLOCK);
    CHECK(b != NULL, "malloc(%d)", BLOCK);
    memset(b, 1, BLOCK);
    free(b);
    for (int i = 0; i < 40; i++) {
      void *p = malloc(OTHER), *q = malloc(OTHER);
      CHECK(p != NULL && q != NULL, "malloc(%d)", OTHER);
      memset(p, 1, OTHER);
      memset(q, 1, OTHER);
      free(p);
      free(q);
    }
    if (apart) {
      struct timespec ts = {0, 30 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
  }
  purges = (long)(purges_now() - before);
  return NULL;
}

int main(int argc, char **argv) {
  CHECK(argc == 2 && (!strcmp(argv[1], "churn") || !strcmp(argv[1], "apart")),
        "usage: giveback churn|apart");
  apart = !strcmp(argv[1], "apart");
  pthread_t t;
  CHECK(pthread_create(&t, NULL, rounds, NULL) == 0, "pthread_create");
  CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  printf("purges %ld\n", purges);
  return 0;
}
