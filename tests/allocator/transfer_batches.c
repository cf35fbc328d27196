/* The transfer cache: a consumer's cache hands whole batches of the producer's
 * blocks to the producer, which allocates them again without their going home.
 *
 * Usage: transfer_batches SIZE N. Producer P allocates N blocks of SIZE bytes
 * (a multiple of its refill, so that its cache of the class ends empty) and
 * writes each; consumer C frees all of them, prints its figures and exits: "C
 * remote_frees R remote_pushes P transfer_out T". Then P allocates N blocks
 * again and prints its figures for them: "P transfer_in T rfq_blocks Q reused R
 * first_batch_ok B" (reused: how many of the new blocks are among the N freed;
 * first_batch_ok: the first blocks P got are the last batch C put, in C's free
 * order, newest first). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"
#include "two_stages.h"

static void *consumer(void *arg) {
  (void)arg;
  for (int i = 0; i < n; i++)
    free(blocks[i]);
  hsmalloc_heap_stats_t me;
  CHECK(hsmalloc_heap_stats_self(&me) == 0, "no heap");
  printf("C remote_frees %llu remote_pushes %llu transfer_out %llu\n",
         (unsigned long long)me.remote_frees,
         (unsigned long long)me.remote_pushes,
         (unsigned long long)me.transfer_out);
  fflush(stdout);
  return NULL;
}

static int was_freed(const char *p) {
  for (int i = 0; i < n; i++)
    if (blocks[i] == p)
      return 1;
  return 0;
}

static void *producer(void *arg) {
  (void)arg;
  for (int i = 0; i < n; i++) {
    blocks[i] = malloc(size);
    CHECK(blocks[i] != NULL, "malloc");
    memset(blocks[i], 1, size);
  }
  set_stage(1);
  wait_stage(2); /* C freed them all and exited */
  hsmalloc_heap_stats_t before, after;
  CHECK(hsmalloc_heap_stats_self(&before) == 0, "no heap");
  for (int i = 0; i < n; i++) {
    again[i] = malloc(size);
    CHECK(again[i] != NULL, "malloc");
    memset(again[i], 2, size);
  }
  CHECK(hsmalloc_heap_stats_self(&after) == 0, "no heap");
  int reused = 0;
  for (int i = 0; i < n; i++)
    reused += was_freed(again[i]);
  /* C's batches of `bound` blocks: the last one put holds the blocks C freed at
   * (put - 1) * bound + 1 .. put * bound (1-based, counting C's frees), newest
   * first */
  int bound = (int)(4096 / size) < 4 ? 4 : (int)(4096 / size);
  int put = (int)((after.transfer_in - before.transfer_in) / (unsigned)bound);
  int first_ok = put > 0;
  for (int j = 0; j < bound && first_ok; j++)
    first_ok = again[j] == blocks[put * bound - 1 - j];
  printf("P transfer_in %llu rfq_blocks %llu reused %d first_batch_ok %d\n",
         (unsigned long long)(after.transfer_in - before.transfer_in),
         (unsigned long long)(after.rfq_blocks - before.rfq_blocks), reused,
         first_ok);
  for (int i = 0; i < n; i++)
    free(again[i]);
  return NULL;
}

int main(int argc, char **argv) {
  return run_two_stages(argc, argv, "usage: transfer_batches SIZE N", producer, consumer);
}
