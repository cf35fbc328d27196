/* Free blocks of a big class beyond the heap's reserve of it give their whole OS pages
 * back. 64 blocks of 70000 bytes (class 73728: pages of 4 blocks, 5 slices) are
 * written in full; the 3 blocks after the first of each page are freed (48: no page
 * empties). With HSMALLOC_FREE_RESERVE of 8 blocks and the class's cache holding one,
 * 9 of them stay resident and 39 have their interiors (the whole 4 KiB pages after each
 * block's first 16 bytes) given back. The next 10 allocations take the 9 resident
 * ones first, then a purged one. Then the class goes idle (40 large blocks, a slow path
 * each): its cache and its reserve go back too. Prints "name value" pairs:
 *   resident, purged, mixed   freed blocks whose interior is all, none, part resident
 *   reuse_resident            of the next 9 blocks, those resident before any write
 *   tenth_interior            the 10th's: 1 resident, 0 given back
 *   idle_resident             freed blocks still resident once the class went idle
 * With the argument "collect": resident, purged, mixed, then hsmalloc_collect() and
 *   collect_resident          freed blocks still resident after it */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "hsmalloc.h"

#define BLOCK  70000
#define BLOCKS 64
#define ON_PAGE 4 /* blocks of class 73728 a page (5 slices) */

/* 1: every whole 4 KiB page after the block's first 16 bytes is resident, 0: none,
 * -1: some */
static int interior(const char *p) {
  uintptr_t lo = ((uintptr_t)p + 16 + 4095) & ~(uintptr_t)4095;
  uintptr_t hi = ((uintptr_t)p + BLOCK) & ~(uintptr_t)4095;
  unsigned char vec[32];
  size_t pages = (hi - lo) / 4096, in = 0;
  CHECK(mincore((void *)lo, hi - lo, vec) == 0, "mincore");
  for (size_t i = 0; i < pages; i++) in += vec[i] & 1;
  return in == pages ? 1 : in == 0 ? 0 : -1;
}

static char *block[BLOCKS];

static void census(const char *resident, const char *purged, const char *mixed) {
  long count[3] = {0, 0, 0};
  for (int i = 0; i < BLOCKS; i++)
    if (i % ON_PAGE != 0) count[interior(block[i]) + 1]++;
  printf("%s %ld\n", resident, count[2]);
  if (purged) printf("%s %ld\n%s %ld\n", purged, count[1], mixed, count[0]);
}

int main(int argc, char **argv) {
  for (int i = 0; i < BLOCKS; i++) {
    block[i] = malloc(BLOCK);
    CHECK(block[i] != NULL, "malloc(%d)", BLOCK);
    for (size_t k = 0; k < BLOCK; k++) ((volatile char *)block[i])[k] = (char)k;
  }
  for (int i = 0; i < BLOCKS; i++)
    if (i % ON_PAGE != 0) free(block[i]);
  census("resident", "purged", "mixed");
  if (argc > 1 && strcmp(argv[1], "collect") == 0) { /* the reserve goes back too */
    hsmalloc_collect();
    census("collect_resident", NULL, NULL);
    return 0;
  }

  char *again[10];
  long reused = 0;
  for (int i = 0; i < 10; i++) {
    again[i] = malloc(BLOCK);
    CHECK(again[i] != NULL, "malloc(%d)", BLOCK);
    if (i < 9) reused += interior(again[i]) == 1;
  }
  printf("reuse_resident %ld\ntenth_interior %d\n", reused, interior(again[9]));
  for (int i = 0; i < 10; i++) free(again[i]);

  for (int i = 0; i < 40; i++) {
    char *r = malloc(200000);
    CHECK(r != NULL, "malloc(200000)");
    r[0] = 1;
    free(r);
  }
  census("idle_resident", NULL, NULL);
  for (int i = 0; i < BLOCKS; i += ON_PAGE) free(block[i]);
  return 0;
}
