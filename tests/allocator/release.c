/* Memory goes back to the OS: allocate ~200 MB in small and large blocks, free
 * it all, and print the resident size (KiB, from /proc/self/statm) at each
 * step: "peak <kib> freed <kib> trimmed <kib> purged_bytes <n>" malloc_trim(0)
 * must return what the decay has not returned yet. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hsmalloc.h"

#define N 200000

static long rss_kib(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL || fscanf(f, "%ld %ld", &pages, &resident) != 2)
    abort();
  fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(void) {
  static void *blocks[N];
  for (int i = 0; i < N; i++) {
    size_t size = i % 100 == 0 ? 300000 : 64 + (size_t)(i % 16) * 48;
    blocks[i] = malloc(size);
    memset(blocks[i], 7, size);
  }
  long peak = rss_kib();
  for (int i = 0; i < N; i++)
    free(blocks[i]);
  long freed = rss_kib();
  malloc_trim(0);
  long trimmed = rss_kib();
  hsmalloc_stats_t st;
  hsmalloc_stats_get(&st);
  printf("peak %ld freed %ld trimmed %ld purged_bytes %llu\n", peak, freed,
         trimmed, (unsigned long long)st.purged_bytes);
  return 0;
}
