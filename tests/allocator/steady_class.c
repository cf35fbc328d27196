/* A big class in steady use, one block every few sweeps of the caches, keeps its
 * reserve resident (cache.c, hsm_cache_sweep_big): xmalloc-test's producers allocate one
 * 32,776-byte batch every 48 slow paths or so, and the sweep (every 16 slow paths) found
 * the class idle in between and gave back the batches that had come home.
 * One block of 32,776 bytes (class 36,864) stays live, so its page never empties. Each
 * round allocates a second one, writes it whole and frees it (to the thread's cache),
 * then makes 48 large blocks, a slow path each (3 sweeps); with the argument "long",
 * 10 rounds of 800 (50 sweeps: a class taken up again long after, as espresso's
 * 40,960-byte class every 46-56 sweeps, still gives back every time). Prints "name
 * value" pairs:
 *   rounds        rounds made
 *   given_back    rounds whose block came with its interior given back (none of its
 *                 whole 4 KiB pages after the first 16 bytes resident)
 *   late          of them, those after the first 8 rounds
 *   idle_resident after a last round and 5,000 large blocks (the class left for good),
 *                 1 if the freed block's interior is still resident, 0 if given back */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"

#define BLOCK  32776 /* xmalloc-test's batch: 8 + 4096 pointers */

/* 1: every whole 4 KiB page after the block's first 16 bytes is resident, 0: none,
 * -1: some */
static int interior(uintptr_t p) {
  uintptr_t lo = (p + 16 + 4095) & ~(uintptr_t)4095;
  uintptr_t hi = (p + BLOCK) & ~(uintptr_t)4095;
  unsigned char vec[16];
  size_t pages = (hi - lo) / 4096, in = 0;
  CHECK(mincore((void *)lo, hi - lo, vec) == 0, "mincore");
  for (size_t i = 0; i < pages; i++) in += vec[i] & 1;
  return in == pages ? 1 : in == 0 ? 0 : -1;
}

static void large_blocks(int n) {
  for (int i = 0; i < n; i++) {
    char *r = malloc(200000);
    CHECK(r != NULL, "malloc(200000)");
    r[0] = 1;
    free(r);
  }
}

int main(int argc, char **argv) {
  int slow = argc > 1 && strcmp(argv[1], "long") == 0;
  int rounds = slow ? 10 : 40, gap = slow ? 800 : 48; /* gap: large blocks a round */
  char *pin = malloc(BLOCK);
  CHECK(pin != NULL, "malloc(%d)", BLOCK);
  pin[0] = 1;
  int given_back = 0, late = 0;
  uintptr_t last = 0; /* the last round's block, freed */
  for (int r = 0; r <= rounds; r++) {
    char *b = malloc(BLOCK);
    CHECK(b != NULL, "malloc(%d)", BLOCK);
    int state = interior((uintptr_t)b);
    CHECK(state != -1, "round %d: a block partly resident", r);
    if (r > 0 && state == 0) { /* round 0's block is freshly carved */
      given_back++;
      late += r > 8;
    }
    for (size_t k = 0; k < BLOCK; k++) ((volatile char *)b)[k] = (char)k;
    last = (uintptr_t)b;
    free(b);
    large_blocks(r < rounds ? gap : 5000);
  }
  printf("rounds %d\ngiven_back %d\nlate %d\nidle_resident %d\n", rounds, given_back, late,
         interior(last));
  free(pin);
  return 0;
}
