/* Resident memory of a program that grows arrays by copies (FreeFem++'s sparse
 * matrices and vectors: a new block 1.2 times the old, the contents copied, the old
 * freed), and of huge blocks freed and allocated again with everything purged at once.
 *   growth   three series of blocks from 1.25 MiB to ~15 MiB, each grown by 1.2;
 *            prints "live_peak <B> rss_peak <B> committed_peak <B> growth_purged <B>":
 *            the most bytes live at once (the old and the new block during a copy),
 *            the most the resident set (/proc/self/statm) and the spy's committed
 *            memory grew over their values before the first series
 *   reuse    malloc(4 MiB), fill, free, 100 times (run with HSMALLOC_DECAY_MS=0: each
 *            free purges the mapping); prints "same <n> reserved_peak <B>": how many
 *            allocations got the first one's address, the spy's peak address space */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hsmalloc.h"

static long long rss_bytes(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL || fscanf(f, "%ld %ld", &pages, &resident) != 2) abort();
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
      if (w == NULL) return 1;
      memcpy(w, v, size);
      memset(w + size, 2, grown - size);
      if ((long long)(size + grown) > live_peak) live_peak = (long long)(size + grown);
      if (rss_bytes() - rss0 > rss_peak) rss_peak = rss_bytes() - rss0;
      if (committed() - com0 > com_peak) com_peak = committed() - com0;
      free(v);
      v = w;
      size = grown;
    }
    free(v);
  }
  hsmalloc_stats_t st;
  hsmalloc_stats_get(&st);
  printf("live_peak %lld rss_peak %lld committed_peak %lld growth_purged %llu\n", live_peak,
         rss_peak, com_peak, (unsigned long long)st.growth_purged_bytes);
  return 0;
}

static int reuse(void) {
  const size_t size = (size_t)4 << 20;
  void *first = NULL;
  int same = 0;
  for (int i = 0; i < 100; i++) {
    char *p = malloc(size);
    if (p == NULL) return 1;
    memset(p, 3, size);
    if (first == NULL) first = p;
    same += p == first;
    free(p);
  }
  hsmalloc_stats_t st;
  hsmalloc_stats_get(&st);
  printf("same %d reserved_peak %llu\n", same, (unsigned long long)st.reserved_peak);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "growth") == 0) return growth();
  if (argc == 2 && strcmp(argv[1], "reuse") == 0) return reuse();
  fprintf(stderr, "usage: growth growth|reuse\n");
  return 2;
}
