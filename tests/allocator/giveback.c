/* What goes back to the OS as a page of a class above 8 KiB goes back to its
 * segment (purge.c, hsm_purge_page_gone). In a thread of its own (a heap whose
 * slow paths are all this program's), ROUNDS rounds of class 12,288:
 *
 * busy: BLOCKS blocks are allocated and written in full, then freed: the pages
 * other than the current one empty as the class's cache flushes to them, while
 * the class has allocated since the last sweep of the caches (it is in use),
 * and go back to their segment; the next round's blocks are carved again on
 * their slices. idle: one block is written and freed, then 40 pairs of
 * 16,384-byte blocks are allocated, written and freed (a slow path a pair), so
 * that the class, idle for a sweep, sends its block home and its page goes back
 * to its segment; the next round makes the page again at once (within
 * microseconds). apart: the same, and 10 ms pass before the next round
 * (nanosleep): more than a tick of the coarse clock. gaps: as idle, and 5 ms pass
 * before every fourth round (a thread preempted for a time slice or two, as the
 * producers of xmalloc-test, four threads on two cores, are).
 *
 * Prints "name value" pairs: purges, the madvise calls of the rounds after the
 * first (hsmalloc_stats_get); faults, the process's minor faults over them
 * (getrusage); resident, the 4 KiB pages of the last round's blocks resident
 * after their free (mincore; busy only). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "check.h"
#include "hsmalloc.h"

#define ROUNDS 20
#define BLOCKS 32
#define BLOCK 12288
#define OTHER 16384

static int busy, apart, gaps;
static long purges, faults, resident;

static long purges_now(void) {
  hsmalloc_stats_t s;
  CHECK(hsmalloc_stats_get(&s) == 0, "hsmalloc_stats_get");
  return (long)s.purges;
}

static long faults_now(void) {
  struct rusage ru;
  CHECK(getrusage(RUSAGE_SELF, &ru) == 0, "getrusage");
  return ru.ru_minflt;
}

static long resident_pages(char *const *b) {
  long r = 0;
  for (int i = 0; i < BLOCKS; i++) {
    unsigned char vec[BLOCK / 4096 + 1];
    uintptr_t start = (uintptr_t)b[i] & ~(uintptr_t)4095;
    size_t pages = ((uintptr_t)b[i] + BLOCK - start + 4095) / 4096;
    CHECK(mincore((void *)start, pages * 4096, vec) == 0, "mincore");
    for (size_t p = 0; p < pages; p++)
      r += vec[p] & 1;
  }
  return r;
}

static void busy_round(char **b) {
  for (int i = 0; i < BLOCKS; i++) {
    b[i] = malloc(BLOCK);
    CHECK(b[i] != NULL, "malloc(%d)", BLOCK);
    memset(b[i], 1, BLOCK);
  }
  for (int i = 0; i < BLOCKS; i++)
    free(b[i]);
}

static void pause_ms(long ms) {
  struct timespec ts = {0, ms * 1000 * 1000};
  nanosleep(&ts, NULL);
}

static void idle_round(int r) {
  if (gaps && r % 4 == 0) pause_ms(5);
  char *b = malloc(BLOCK);
  CHECK(b != NULL, "malloc(%d)", BLOCK);
  memset(b, 1, BLOCK);
  free(b);
  for (int i = 0; i < 40; i++) {
    char *p = malloc(OTHER), *q = malloc(OTHER);
    CHECK(p != NULL && q != NULL, "malloc(%d)", OTHER);
    memset(p, 1, OTHER);
    memset(q, 1, OTHER);
    free(p);
    free(q);
  }
  if (apart) pause_ms(10);
}

static void *rounds(void *arg) {
  (void)arg;
  char *b[BLOCKS];
  long p0 = 0, f0 = 0;
  for (int r = 0; r < ROUNDS; r++) {
    if (r == 1) {
      p0 = purges_now();
      f0 = faults_now();
    }
    if (busy)
      busy_round(b);
    else
      idle_round(r);
  }
  purges = purges_now() - p0;
  faults = faults_now() - f0;
  if (busy)
    resident = resident_pages(b);
  return NULL;
}

int main(int argc, char **argv) {
  CHECK(argc == 2 && (!strcmp(argv[1], "busy") || !strcmp(argv[1], "idle") ||
                      !strcmp(argv[1], "apart") || !strcmp(argv[1], "gaps")),
        "usage: giveback busy|idle|apart|gaps");
  busy = !strcmp(argv[1], "busy");
  apart = !strcmp(argv[1], "apart");
  gaps = !strcmp(argv[1], "gaps");
  pthread_t t;
  CHECK(pthread_create(&t, NULL, rounds, NULL) == 0, "pthread_create");
  CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  printf("purges %ld faults %ld resident %ld\n", purges, faults, resident);
  return 0;
}
