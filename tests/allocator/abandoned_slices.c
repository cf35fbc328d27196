/* Free slices of an exited thread's heap go back to the OS without a new thread to
 * adopt the heap. A worker thread allocates a small block (kept: its page keeps the
 * segment in the heap) and 6 large blocks of 256 KiB (24 slices of the same segment),
 * writes them, frees the large ones and exits: 512 KiB of free, resident slices in an
 * abandoned heap (the frees gave back what lay beyond the idle budget and the block freed
 * last). The main thread then either calls hsmalloc_collect ("collect") or
 * sleeps SLEEP_MS and allocates and frees 600 large blocks of 192 KiB (its maintenance
 * runs every 256 large allocations: "decay"). Prints
 * "held <kib> after <kib> purged <bytes>": the resident size (/proc/self/statm) after
 * the worker exited and after the main thread's step, and the bytes purged in between. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hsmalloc.h"

#define LARGE (256 * 1024)

static long rss_kib(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL || fscanf(f, "%ld %ld", &pages, &resident) != 2) abort();
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* a block allocated and freed at once (volatile: the compiler may not drop the pair) */
static void churn(size_t size) {
  void *volatile p = malloc(size);
  free(p);
}

static uint64_t purged_bytes(void) {
  hsmalloc_stats_t st;
  hsmalloc_stats_get(&st);
  return st.purged_bytes;
}

static void *worker(void *arg) {
  (void)arg;
  char *keep = malloc(48);
  void *large[6];
  for (int i = 0; i < 6; i++) {
    large[i] = malloc(LARGE);
    memset(large[i], 1, LARGE);
  }
  for (int i = 0; i < 6; i++) free(large[i]);
  return keep;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "collect") != 0 && strcmp(argv[1], "decay") != 0)) {
    fprintf(stderr, "usage: abandoned_slices collect|decay SLEEP_MS\n");
    return 2;
  }
  /* the main thread's own pages exist before the figures are taken */
  churn(192 * 1024);
  pthread_t t;
  void *keep = NULL;
  if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, &keep) != 0) return 1;
  /* the figures' own first uses (the statistics' code and buffers, nanosleep's page of
   * libc: 64-100 KiB, mapped 64 KiB at a time) are made before the first figure */
  uint64_t before = purged_bytes();
  struct timespec none = {0, 0};
  nanosleep(&none, NULL);
  long held = rss_kib();
  before = purged_bytes();
  if (strcmp(argv[1], "collect") == 0) {
    hsmalloc_collect();
  } else {
    long ms = atol(argv[2]);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    for (int i = 0; i < 600; i++) churn(192 * 1024);
  }
  long after = rss_kib();
  printf("held %ld after %ld purged %llu\n", held, after,
         (unsigned long long)(purged_bytes() - before));
  free(keep);
  return 0;
}
