/* A cache refilled from its page's returned blocks. One thread allocates N blocks of
 * 64 bytes (pages of 1024), frees all but the first of every 1024 (so that no page
 * empties: its cache of the class holds 1024 blocks, the rest go back to their pages
 * in flushes), then allocates N - 3 again; it prints the second round's slow
 * allocations (cache refills): "slow S" */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"

#define N 3000
#define SIZE 64

static void *first[N], *second[N], *kept[N / 1024 + 1];

int main(void) {
  for (int i = 0; i < N; i++) {
    first[i] = malloc(SIZE);
    CHECK(first[i] != NULL, "malloc");
    memset(first[i], 1, SIZE);
  }
  for (int i = 0; i < N; i++)
    if (i % 1024 != 0) free(first[i]);
    else kept[i / 1024] = first[i];
  hsmalloc_heap_stats_t before, after;
  CHECK(hsmalloc_heap_stats_self(&before) == 0, "no heap");
  for (int i = 0; i < N - 3; i++) {
    second[i] = malloc(SIZE);
    CHECK(second[i] != NULL, "malloc");
  }
  CHECK(hsmalloc_heap_stats_self(&after) == 0, "no heap");
  printf("slow %llu\n", (unsigned long long)(after.slow_allocs - before.slow_allocs));
  for (int i = 0; i < N - 3; i++)
    free(second[i]);
  for (int i = 0; i < N; i += 1024)
    free(kept[i / 1024]);
  return 0;
}
