/* The pages of a fixed class a hot class took over, and the segments of big hot pages.
 *
 * "fixed": the first detection window (1,024 allocations) samples 1,024 arrays of 4,112
 * bytes (2^9 + 2 doubles), each written in full: the fixed class of 4,608 bytes serves
 * them, and at the window's end 4,112 gets a hot class, which serves the next 64. The
 * 1,024 are then freed: their class allocates nothing any more, so each of its pages
 * that empties goes back to its segment with its OS pages given back at once. Prints
 *   fixed_pages      OS pages the 1,024 blocks cover (none a later block shares)
 *   fixed_resident   those still resident once the 1,024 are freed
 *   hot_exact        of the next 64, those whose usable size is 4,112 (the hot class's)
 * "segments": 224 blocks of a named hot 65,552 bytes (HSMALLOC_HOT_SIZES=65552), 16
 * pages' worth, written in full. Prints
 *   per_page         blocks a page holds (the first block of a segment's second page is
 *                    the first one more than a page's span after its predecessor)
 *   segments         the 2 MiB segments the 224 blocks lie in
 * "refill": a named hot 4,112 bytes: 400 blocks written (a first page of 239, parked full,
 * and a second being carved), then 120 of the first page's freed and 120 allocated.
 * Prints
 *   reused           of the 120, those on the first page (blocks written before)
 *   fresh            those on the second page's uncarved part (fresh memory) */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "hsmalloc.h"

#define SAMPLED 1024
#define SMALL   4112
#define BIG     65552
#define BIGS    224

static char *block[SAMPLED];

static void fill(char *p, size_t n) {
  for (size_t k = 0; k < n; k += 512) ((volatile char *)p)[k] = 1;
  ((volatile char *)p)[n - 1] = 1;
}

/* the OS page of address a, as an index from lo */
#define PAGE_AT(a) (((uintptr_t)(a) - lo) / 4096)

static void fixed(void) {
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < SAMPLED; i++) {
    block[i] = malloc(SMALL);
    CHECK(block[i] != NULL, "malloc(%d)", SMALL);
    fill(block[i], SMALL);
    if ((uintptr_t)block[i] < lo) lo = (uintptr_t)block[i];
    if ((uintptr_t)block[i] + SMALL > hi) hi = (uintptr_t)block[i] + SMALL;
  }
  lo &= ~(uintptr_t)4095;
  hi = (hi + 4095) & ~(uintptr_t)4095;
  size_t span = (hi - lo) / 4096;
  static unsigned char vec[4 * SAMPLED], mine[4 * SAMPLED];
  CHECK(span <= sizeof vec, "span of %zu pages", span);
  for (int i = 0; i < SAMPLED; i++) /* the OS pages the 1,024 blocks cover */
    for (size_t k = PAGE_AT(block[i]); k <= PAGE_AT(block[i] + SMALL - 1); k++) mine[k] = 1;
  char *hot[64];
  long exact = 0;
  for (int i = 0; i < 64; i++) {
    hot[i] = malloc(SMALL);
    CHECK(hot[i] != NULL, "malloc(%d)", SMALL);
    fill(hot[i], SMALL);
    exact += malloc_usable_size(hot[i]) == SMALL;
    if ((uintptr_t)hot[i] + SMALL > lo && (uintptr_t)hot[i] < hi) /* (a page both share) */
      for (size_t k = PAGE_AT(hot[i]); k <= PAGE_AT(hot[i] + SMALL - 1) && k < span; k++)
        mine[k] = 0;
  }
  for (int i = 0; i < SAMPLED; i++) free(block[i]);
  size_t pages = 0, in = 0;
  CHECK(mincore((void *)lo, hi - lo, vec) == 0, "mincore");
  for (size_t k = 0; k < span; k++) {
    pages += mine[k];
    in += mine[k] & vec[k] & 1;
  }
  printf("fixed_pages %zu\nfixed_resident %zu\nhot_exact %ld\n", pages, in, exact);
  for (int i = 0; i < 64; i++) free(hot[i]);
}

static void segments(void) {
  static char *big[BIGS];
  long per_page = 0, segs = 0;
  for (int i = 0; i < BIGS; i++) {
    big[i] = malloc(BIG);
    CHECK(big[i] != NULL, "malloc(%d)", BIG);
    fill(big[i], BIG);
    if (per_page == 0 && i > 0 && (uintptr_t)big[i] != (uintptr_t)big[i - 1] + BIG) per_page = i;
    int fresh = 1;
    for (int j = 0; j < i && fresh; j++)
      fresh = ((uintptr_t)big[j] >> 21) != ((uintptr_t)big[i] >> 21);
    segs += fresh;
  }
  printf("per_page %ld\nsegments %ld\n", per_page, segs);
  for (int i = 0; i < BIGS; i++) free(big[i]);
}

static void refill(void) {
  static char *b[400];
  for (int i = 0; i < 400; i++) {
    b[i] = malloc(SMALL);
    CHECK(b[i] != NULL, "malloc(%d)", SMALL);
    fill(b[i], SMALL);
  }
  uintptr_t first = (uintptr_t)b[0], last = (uintptr_t)b[238] + SMALL, top = 0;
  for (int i = 0; i < 400; i++)
    if ((uintptr_t)b[i] > top) top = (uintptr_t)b[i];
  CHECK((uintptr_t)b[238] == first + 238 * SMALL, "a first page of 239 blocks");
  for (int i = 0; i < 120; i++) free(b[2 * i]);
  long reused = 0, fresh = 0;
  for (int i = 0; i < 120; i++) {
    char *p = malloc(SMALL);
    CHECK(p != NULL, "malloc(%d)", SMALL);
    reused += (uintptr_t)p >= first && (uintptr_t)p < last;
    fresh += (uintptr_t)p > top && (uintptr_t)p < top + 239 * SMALL;
    fill(p, SMALL);
  }
  printf("reused %ld\nfresh %ld\n", reused, fresh);
}

int main(int argc, char **argv) {
  CHECK(argc == 2, "usage: hot_big_pages fixed|segments|refill");
  if (strcmp(argv[1], "fixed") == 0) fixed();
  else if (strcmp(argv[1], "segments") == 0) segments();
  else refill();
  return 0;
}
