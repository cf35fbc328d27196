/* A thread that frees the blocks of an idle owner (a heap whose queue of other threads'
 * frees its thread does not drain: it is not allocating) keeps them in its cache, where
 * its own allocations of the class take them, rather than send them all to the queue.
 *
 * Usage: idle_owner SIZE N. Owner O allocates N blocks of SIZE bytes, writes each and
 * waits. Freer F allocates N blocks of SIZE and frees them (it allocates the class as
 * often as it frees it), frees O's N blocks in order, then allocates N blocks of SIZE
 * and prints "remote_frees R reused U" (remote_frees: O's blocks F sent home;
 * reused: F's new blocks that are O's). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"
#include "two_stages.h"

static void *owner(void *arg) {
  (void)arg;
  for (int i = 0; i < n; i++) {
    blocks[i] = malloc(size);
    CHECK(blocks[i] != NULL, "malloc");
    memset(blocks[i], 1, size);
  }
  set_stage(1);
  wait_stage(2); /* idle while F frees and allocates */
  return NULL;
}

static int was_freed(const char *p) {
  for (int i = 0; i < n; i++)
    if (blocks[i] == p) return 1;
  return 0;
}

static void *freer(void *arg) {
  (void)arg;
  for (int i = 0; i < n; i++) { /* F allocates the class as often as it frees it */
    again[i] = malloc(size);
    CHECK(again[i] != NULL, "malloc");
    memset(again[i], 3, size);
  }
  for (int i = 0; i < n; i++)
    free(again[i]);
  for (int i = 0; i < n; i++)
    free(blocks[i]);
  hsmalloc_heap_stats_t me;
  CHECK(hsmalloc_heap_stats_self(&me) == 0, "no heap");
  int reused = 0;
  for (int i = 0; i < n; i++) {
    again[i] = malloc(size);
    CHECK(again[i] != NULL, "malloc");
    memset(again[i], 2, size);
    reused += was_freed(again[i]);
  }
  printf("remote_frees %llu reused %d\n", (unsigned long long)me.remote_frees, reused);
  fflush(stdout);
  for (int i = 0; i < n; i++)
    free(again[i]);
  return NULL;
}

int main(int argc, char **argv) {
  return run_two_stages(argc, argv, "usage: idle_owner SIZE N", owner, freer);
}
