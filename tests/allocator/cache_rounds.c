/* Rounds of 64 KiB of small blocks in a thread's cache. One thread, for each of
 * 16, 32 and 48 bytes: a warm-up round, then ROUNDS rounds, each allocating n blocks
 * (each written) and freeing the first half oldest first, the second newest first, as
 * glibc-simple does; n is what 64 KiB holds, at most 2048 blocks (2048, 2048 and 1365).
 * It prints each size's slow allocations (cache refills) over the rounds after the
 * warm-up, and the blocks the last round's allocations got back that an earlier round
 * had freed: "slow16 S reused16 R ..." */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"

#define ROUNDS 10
#define MAX_N 2048

static char *arr[MAX_N], *prev[MAX_N];

static void round_of(size_t size, int n) {
  for (int i = 0; i < n; i++) {
    arr[i] = malloc(size);
    CHECK(arr[i] != NULL, "malloc(%zu)", size);
    memset(arr[i], (int)i, size);
  }
  for (int i = 0; i < n / 2; i++) free(arr[i]);
  for (int i = n - 1; i >= n / 2; i--) free(arr[i]);
}

static int cmp_ptr(const void *a, const void *b) {
  char *x = *(char *const *)a, *y = *(char *const *)b;
  return (x > y) - (x < y);
}

int main(void) {
  static const size_t sizes[] = {16, 32, 48};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    size_t size = sizes[s];
    int n = 64 * 1024 / (int)size;
    if (n > MAX_N) n = MAX_N;
    round_of(size, n);
    hsmalloc_heap_stats_t before, after;
    CHECK(hsmalloc_heap_stats_self(&before) == 0, "no heap");
    for (int r = 0; r < ROUNDS; r++) {
      if (r == ROUNDS - 1) memcpy(prev, arr, sizeof(char *) * (size_t)n);
      round_of(size, n);
    }
    CHECK(hsmalloc_heap_stats_self(&after) == 0, "no heap");
    /* the last round's blocks are the ones the round before freed (the cache's) */
    qsort(prev, (size_t)n, sizeof prev[0], cmp_ptr);
    int reused = 0;
    for (int i = 0; i < n; i++)
      reused += bsearch(&arr[i], prev, (size_t)n, sizeof prev[0], cmp_ptr) != NULL;
    printf("slow%zu %llu reused%zu %d ", size,
           (unsigned long long)(after.slow_allocs - before.slow_allocs), size, reused);
  }
  printf("\n");
  return 0;
}
