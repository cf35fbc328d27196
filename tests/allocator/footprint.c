/* hsmalloc's resident footprint against what a program holds, counted in 4 KiB
 * pages with mincore over the segments the program's blocks lie in (their
 * header slice left out).
 *
 * exact: a fresh thread allocates 1600 blocks of 64 bytes (100 KiB), writes
 * them and frees them, 20 times; its heap's first 1024 allocations are a
 * hot-size window, which 64 takes all of. 64 is a fixed class of exactly 64
 * bytes, so no hot class is made for it and one set of pages holds the blocks:
 * two slices of 1024 blocks. Prints "resident N hot H" (H: hot rows of size
 * 64). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "hsmalloc.h"

#define SEGMENT ((uintptr_t)2 << 20)
#define SLICE ((uintptr_t)64 << 10)
#define MAX_SEGMENTS 16

static uintptr_t segments[MAX_SEGMENTS];
static int nsegments;

static void note_segment(const void *p) {
  uintptr_t s = (uintptr_t)p & ~(SEGMENT - 1);
  for (int i = 0; i < nsegments; i++)
    if (segments[i] == s)
      return;
  CHECK(nsegments < MAX_SEGMENTS, "more than %d segments", MAX_SEGMENTS);
  segments[nsegments++] = s;
}

/* 4 KiB pages resident in the noted segments, but their header slices */
static long resident(void) {
  static unsigned char vec[SEGMENT / 4096];
  long n = 0;
  for (int s = 0; s < nsegments; s++) {
    CHECK(mincore((void *)segments[s], SEGMENT, vec) == 0, "mincore");
    for (size_t i = SLICE / 4096; i < SEGMENT / 4096; i++)
      n += vec[i] & 1;
  }
  return n;
}

#define EXACT_BLOCKS 1600
static long exact_resident;

static void *exact_thread(void *arg) {
  (void)arg;
  static void *blocks[EXACT_BLOCKS];
  for (int r = 0; r < 20; r++) {
    for (int i = 0; i < EXACT_BLOCKS; i++) {
      blocks[i] = malloc(64);
      CHECK(blocks[i] != NULL, "malloc(64)");
      memset(blocks[i], 1, 64);
      note_segment(blocks[i]);
    }
    for (int i = 0; i < EXACT_BLOCKS; i++)
      free(blocks[i]);
  }
  exact_resident = resident();
  return NULL;
}

static int hot_rows(size_t size) {
  hsmalloc_stats_t st;
  CHECK(hsmalloc_stats_get(&st) == 0, "hsmalloc_stats_get");
  int n = 0;
  for (uint64_t i = 0; i < st.hot_classes; i++)
    n += st.hot[i].size == size;
  return n;
}

static void exact(void) {
  pthread_t t;
  CHECK(pthread_create(&t, NULL, exact_thread, NULL) == 0, "pthread_create");
  CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  printf("resident %ld hot %d\n", exact_resident, hot_rows(64));
}

int main(int argc, char **argv) {
  CHECK(argc == 2, "usage: footprint exact");
  if (strcmp(argv[1], "exact") == 0)
    exact();
  else
    CHECK(0, "unknown mode %s", argv[1]);
  return 0;
}
