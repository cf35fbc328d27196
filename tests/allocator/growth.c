/* Resident memory of a program that grows arrays by copies (FreeFem++'s sparse
 * matrices and vectors: a new block 1.2 times the old, the contents copied, the
 * old freed), and of huge blocks freed and allocated again with everything
 * purged at once. growth   three series of blocks from 1.25 MiB to ~15 MiB,
 * each grown by 1.2; prints "live_peak <B> rss_peak <B> committed_peak <B>
 * growth_purged <B>": the most bytes live at once (the old and the new block
 * during a copy), the most the resident set (/proc/self/statm) and the spy's
 * committed memory grew over their values before the first series reuse
 * malloc(4 MiB), fill, free, 100 times (run with HSMALLOC_DECAY_MS=0: each free
 * purges the mapping); prints "same <n> reserved_peak <B>": how many
 *            allocations got the first one's address, the spy's peak address
 * space large    freed large memory serving the next large request
 * (realloc-large's pattern); for each step the growth of the spy's committed
 * memory and of the resident set over it: "split_committed <B> split_rss <B>"
 * (1.2 MiB freed, then 600 KiB allocated), "cached_..." (1.9 MiB freed, then
 *            1.3 MiB), "slide_..." and "slide_moved <0|1>" (blocks a, b, c of
 * 256 KiB side by side, a freed, b realloc'ed to 512 KiB: it can only grow down
 *            into a's slices)
 * small    a small heap's buffer grown by copies among large blocks; prints "live <B>
 *            rss <B> growth_purged <B>": what is live at the end, the resident set's
 *            growth, the spy's bytes given back to offset growth
 * shrink   large blocks freed at a program's end; prints "held <B> round_faults <n>":
 *            the resident set's growth once all are free, the faults of 1 MiB rounds */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hsmalloc.h"

static long long rss_bytes(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL || fscanf(f, "%ld %ld", &pages, &resident) != 2)
    abort();
  fclose(f);
  return (long long)resident * sysconf(_SC_PAGESIZE);
}

static long long committed(void) {
  hsmalloc_stats_t st;
  hsmalloc_stats_get(&st);
  return (long long)st.committed;
}

static int growth(void) {
  long long rss0 = rss_bytes(), com0 = committed();
  long long live_peak = 0, rss_peak = 0, com_peak = 0;
  for (int series = 0; series < 3; series++) {
    size_t size = (size_t)1280 << 10;
    char *v = malloc(size);
    memset(v, 1, size);
    while (size < ((size_t)15 << 20)) {
      size_t grown = size + size / 5;
      char *w = malloc(grown);
      if (w == NULL)
        return 1;
      memcpy(w, v, size);
      memset(w + size, 2, grown - size);
      if ((long long)(size + grown) > live_peak)
        live_peak = (long long)(size + grown);
      if (rss_bytes() - rss0 > rss_peak)
        rss_peak = rss_bytes() - rss0;
      if (committed() - com0 > com_peak)
        com_peak = committed() - com0;
      free(v);
      v = w;
      size = grown;
    }
    free(v);
  }
  hsmalloc_stats_t st;
  hsmalloc_stats_get(&st);
  printf(
      "live_peak %lld rss_peak %lld committed_peak %lld growth_purged %llu\n",
      live_peak, rss_peak, com_peak,
      (unsigned long long)st.growth_purged_bytes);
  return 0;
}

static int reuse(void) {
  const size_t size = (size_t)4 << 20;
  void *first = NULL;
  int same = 0;
  for (int i = 0; i < 100; i++) {
    char *p = malloc(size);
    if (p == NULL)
      return 1;
    memset(p, 3, size);
    if (first == NULL)
      first = p;
    same += p == first;
    free(p);
  }
  hsmalloc_stats_t st;
  hsmalloc_stats_get(&st);
  printf("same %d reserved_peak %llu\n", same,
         (unsigned long long)st.reserved_peak);
  return 0;
}

static long long com_mark, rss_mark;
static char report[512];
static void mark(void) {
  com_mark = committed();
  rss_mark = rss_bytes();
}
static void
since(const char *step) { /* (no stdio buffer allocated before the end) */
  long long com = committed() - com_mark, rss = rss_bytes() - rss_mark;
  size_t at = strlen(report);
  snprintf(report + at, sizeof report - at, "%s_committed %lld %s_rss %lld\n",
           step, com, step, rss);
}

static char *filled(size_t size, int c) {
  char *p = malloc(size);
  if (p == NULL)
    abort();
  memset(p, c, size);
  return p;
}

static int large(void) {
  mark(); /* the statm reading's own small pages, before anything measured */
  /* split: 1.2 MiB freed, then 600 KiB */
  free(filled((size_t)1200 << 10, 1));
  mark();
  char *q = filled((size_t)600 << 10, 2);
  since("split");
  free(q);
  /* cached: 1.9 MiB (a segment of its own) freed, then 1.3 MiB */
  free(filled((size_t)1900 << 10, 3));
  mark();
  char *m = filled((size_t)1300 << 10, 4);
  since("cached");
  free(m);
  /* slide: a, b, c of 256 KiB side by side; a freed, b grown to 512 KiB */
  const size_t k256 = (size_t)256 << 10;
  char *a = filled(k256, 5), *b = filled(k256, 6), *c = filled(k256, 7);
  if (b != a + k256 || c != b + k256) {
    fprintf(stderr, "growth: a, b, c not side by side\n");
    return 1;
  }
  mark(); /* (before the free: the statm reading's FILE could take a's slices)
           */
  free(a);
  char *b2 = realloc(b, 2 * k256);
  if (b2 == NULL)
    return 1;
  since("slide");
  for (size_t i = 0; i < k256; i++)
    if (b2[i] != 6) {
      fprintf(stderr, "growth: contents lost in realloc\n");
      return 1;
    }
  printf("%sslide_moved %d\n", report, b2 == a);
  free(b2);
  free(c);
  return 0;
}

/* A small heap's buffer grown by copies among large blocks (GROMACS's pattern: 375,
 * 386 and 772 KB, then 1 MiB blocks written at its end): what the freed ones leave
 * resident beside the fresh slices of the next. */
static int small(void) {
  mark();
  char *a = filled((size_t)512 << 10, 1); /* live throughout */
  char *b = filled((size_t)384 << 10, 2);
  char *c = filled((size_t)400 << 10, 3);
  free(b);
  char *d = filled((size_t)780 << 10, 4);
  free(c);
  char *e = filled((size_t)1536 << 10, 5); /* fits no free run: fresh slices */
  long long rss = rss_bytes() - rss_mark;
  hsmalloc_stats_t st;
  hsmalloc_stats_get(&st);
  printf("live %zu rss %lld growth_purged %llu\n", ((size_t)(512 + 780 + 1536)) << 10, rss,
         (unsigned long long)st.growth_purged_bytes);
  free(a);
  free(d);
  free(e);
  return 0;
}

/* GROMACS's end: two large buffers live, a 1 MiB one written and freed three times, then
 * the two freed (its clean-up), all in one segment: what stays resident once all are
 * free, and the page faults of the three rounds (getrusage: exact). */
static long minor_faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

static int shrink(void) {
  mark();
  char *a = filled((size_t)256 << 10, 1);
  char *b = filled((size_t)512 << 10, 2);
  long faults = minor_faults();
  for (int round = 0; round < 3; round++)
    free(filled((size_t)1 << 20, 3));
  faults = minor_faults() - faults;
  free(a);
  free(b);
  printf("held %lld round_faults %ld\n", rss_bytes() - rss_mark, faults);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "small") == 0)
    return small();
  if (argc == 2 && strcmp(argv[1], "shrink") == 0)
    return shrink();
  if (argc == 2 && strcmp(argv[1], "large") == 0)
    return large();
  if (argc == 2 && strcmp(argv[1], "growth") == 0)
    return growth();
  if (argc == 2 && strcmp(argv[1], "reuse") == 0)
    return reuse();
  fprintf(stderr, "usage: growth growth|reuse|large|small|shrink\n");
  return 2;
}
