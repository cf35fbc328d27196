/* Secure mode's drain of the queue of other threads' frees fetches the lines of a 4 KiB
 * area of the queue's blocks ahead of its walk when two blocks in a row lie in it
 * (remote.c, fetch_ahead). The main thread allocates 3000 blocks of 64 bytes (80-byte
 * blocks in secure mode); a thread that never allocates (so each of its frees is pushed
 * home alone: the queue holds them in the reverse order of the frees) frees some of
 * them; then the main thread allocates 64-byte blocks until its heap has drained its
 * queue once.
 *   Set "one": one block of each of the first 20 areas that hold a block start (no two
 * blocks in one area). Set "grouped": every block starting in each of the next 8 such
 * areas, area after area. Prints, one line a set:
 *   "SET blocks B areas A drained D fetched F"
 * B the blocks freed, A their distinct areas, D the blocks the drain took back and F
 * the areas the drain fetched (the heap's drain_areas since the set began). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "hsmalloc.h"

#define BLOCKS 3000
#define SIZE 64
#define AREA ((uintptr_t)4096)

static void *blocks[BLOCKS];
static void *chosen[BLOCKS];
static int nchosen;

static uintptr_t area_of(const void *p) { return (uintptr_t)p & ~(AREA - 1); }

static void *free_chosen(void *arg) {
  (void)arg;
  for (int i = 0; i < nchosen; i++)
    free(chosen[i]);
  return NULL;
}

static hsmalloc_heap_stats_t self_stats(void) {
  hsmalloc_heap_stats_t s;
  CHECK(hsmalloc_heap_stats_self(&s) == 0, "hsmalloc_heap_stats_self");
  return s;
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a,
            y = (uintptr_t) * (void *const *)b;
  return x < y ? -1 : x > y;
}

/* The areas of the sorted blocks from the first-th on: up to `want` of them.
 * `whole`: every block of each area, else its first. Fills chosen[]; returns
 * the areas taken and the index past the last area's blocks in *next. */
static int choose(int first, int want, int whole, int *next) {
  int areas = 0, i = first;
  nchosen = 0;
  while (i < BLOCKS && areas < want) {
    uintptr_t a = area_of(blocks[i]);
    int j = i;
    while (j < BLOCKS && area_of(blocks[j]) == a) {
      if (whole || j == i)
        chosen[nchosen++] = blocks[j];
      j++;
    }
    areas++;
    i = j;
  }
  *next = i;
  return areas;
}

static void run_set(const char *name, int areas) {
  hsmalloc_heap_stats_t before = self_stats();
  pthread_t t;
  CHECK(pthread_create(&t, NULL, free_chosen, NULL) == 0, "pthread_create");
  CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  hsmalloc_heap_stats_t after = self_stats();
  for (int k = 0; k < 100000 && after.rfq_drains == before.rfq_drains; k++) {
    CHECK(malloc(SIZE) != NULL, "malloc(%d)",
          SIZE); /* kept: no block of ours comes back */
    after = self_stats();
  }
  CHECK(after.rfq_drains == before.rfq_drains + 1, "one drain (%llu)",
        (unsigned long long)(after.rfq_drains - before.rfq_drains));
  printf("%s blocks %d areas %d drained %llu fetched %llu\n", name, nchosen,
         areas, (unsigned long long)(after.rfq_blocks - before.rfq_blocks),
         (unsigned long long)(after.drain_areas - before.drain_areas));
}

int main(void) {
  for (int i = 0; i < BLOCKS; i++) {
    blocks[i] = malloc(SIZE);
    CHECK(blocks[i] != NULL, "malloc(%d)", SIZE);
  }
  qsort(blocks, BLOCKS, sizeof blocks[0], cmp_ptr);
  int next;
  int areas = choose(0, 20, 0, &next);
  run_set("one", areas);
  areas = choose(next, 8, 1, &next);
  run_set("grouped", areas);
  return 0;
}
