/* Where each segment keeps its slice table (the page of every 64 KiB slice, read by
 * every free): segments are 2 MiB-aligned, so a table at one offset in every header
 * puts all the tables in the same few sets of a 32 KiB 8-way L1 (64 sets of 64-byte
 * lines), where they evict each other. Allocates blocks of 60,000 bytes until their
 * pages span SEGS segments, finds each segment's table in its header (the one run of
 * 32 words that all point into the header: its page structs) and prints "segments N
 * units U sets S": the segments whose table was found, the distinct values of their
 * 2 MiB unit modulo 8, and the distinct L1 sets their tables start in. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

#define SEGS    12
#define SEGMENT ((uintptr_t)2 << 20)
#define HEADER  8192 /* the header's bytes scanned (its first two 4 KiB pages) */
#define SLICES  32

static uintptr_t segs[SEGS];
static int nsegs;

static long table_offset(uintptr_t seg) {
  const uintptr_t *w = (const uintptr_t *)seg;
  long run = 0;
  for (long i = 0; i < (long)(HEADER / sizeof *w); i++) {
    run = w[i] >= seg && w[i] < seg + HEADER ? run + 1 : 0;
    if (run == SLICES) return (long)((i + 1 - SLICES) * sizeof *w);
  }
  return -1;
}

int main(void) {
  static void *blocks[4096];
  int n = 0;
  while (nsegs < SEGS && n < 4096) {
    blocks[n] = malloc(60000);
    CHECK(blocks[n] != NULL, "malloc failed");
    uintptr_t seg = (uintptr_t)blocks[n++] & ~(SEGMENT - 1);
    int seen = 0;
    for (int i = 0; i < nsegs; i++) seen |= segs[i] == seg;
    if (!seen) segs[nsegs++] = seg;
  }
  int found = 0, units = 0, sets = 0;
  int unit_seen[8] = {0}, set_seen[64] = {0};
  for (int i = 0; i < nsegs; i++) {
    long off = table_offset(segs[i]);
    if (off < 0) continue;
    found++;
    unsigned u = (unsigned)(segs[i] / SEGMENT) % 8, s = (unsigned)(off / 64) % 64;
    units += !unit_seen[u]++;
    sets += !set_seen[s]++;
  }
  printf("segments %d units %d sets %d\n", found, units, sets);
  for (int i = 0; i < n; i++) free(blocks[i]);
  return 0;
}
