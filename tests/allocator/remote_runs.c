/* The owner's drain of its remote-free queue gives each run of one page's
 * blocks back in one step. The main thread (the owner) allocates N blocks of 64
 * bytes (16 pages of 64 KiB, all but the last parked full once carved), N/4 of
 * 256 bytes and 4 large blocks of 200000 bytes; a consumer thread frees all but
 * every 100th small block, in an order that alternates classes and jumps
 * between pages (runs of one page are short), and the large ones, then exits
 * (its caches and batches go home). The owner then prints: "queued blocks B
 * bytes Y drains D"  what its queue held before the drain (nothing drained yet:
 * B = Y = D = 0) "drained blocks B bytes Y drains D"  after it allocated the
 * 64-byte blocks freed again (one drain, on the first slow path) "reused R of F
 * grown G"              of the F new 64-byte blocks, R are blocks the consumer
 * freed, and the pages grew by G bytes "end page_bytes D" page bytes after
 * everything is freed and collected, minus those before the test and checks
 * every block it holds is distinct and keeps its contents, and prints the
 * figures expected: "expect blocks B bytes Y". */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"

#define N 16384 /* 64-byte blocks: 1 MiB */
#define M (N / 4)
#define LARGE 4
#define STRIDE                                                                 \
  7919 /* prime: i * STRIDE mod N visits every block, a page apart */

static void *small[N], *mid[M], *large[LARGE];

static int kept(int i) { return i % 100 == 0; }

static void *consumer(void *arg) {
  (void)arg;
  for (int k = 0; k < N; k++) {
    int i = (int)(((long)k * STRIDE) % N);
    if (!kept(i))
      free(small[i]);
    if (i < M && !kept(i))
      free(mid[i]);
  }
  for (int i = 0; i < LARGE; i++)
    free(large[i]);
  return NULL;
}

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
  return x < y ? -1 : x > y;
}

/* Shell sort: glibc's qsort mallocs a buffer as big as the array, whose empty
 * page (a class above 8 KiB) would go back during the figures taken below */
static void sort_ptrs(void **a, size_t n) {
  static const size_t gaps[] = {1750, 701, 301, 132, 57, 23, 10, 4, 1};
  for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++)
    for (size_t i = gaps[g]; i < n; i++) {
      void *v = a[i];
      size_t j = i;
      for (; j >= gaps[g] && (uintptr_t)a[j - gaps[g]] > (uintptr_t)v;
           j -= gaps[g])
        a[j] = a[j - gaps[g]];
      a[j] = v;
    }
}

static hsmalloc_heap_stats_t self(void) {
  hsmalloc_heap_stats_t s;
  CHECK(hsmalloc_heap_stats_self(&s) == 0, "no heap");
  return s;
}

static void *nothing(void *arg) { return arg; }

int main(void) {
  /* stdout's buffer and what glibc keeps of a joined thread (its thread-local
   * storage vector), allocated before the figures are taken */
  printf("start\n");
  pthread_t t;
  CHECK(pthread_create(&t, NULL, nothing, NULL) == 0, "pthread_create");
  CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  hsmalloc_collect();
  hsmalloc_heap_stats_t s0 = self();
  uint64_t small_freed = 0, mid_freed = 0, large_bytes = 0;
  for (int i = 0; i < N; i++) {
    small[i] = malloc(64);
    CHECK(small[i] != NULL, "malloc");
    memset(small[i], i & 0xff, 64);
    small_freed += !kept(i);
  }
  for (int i = 0; i < M; i++) {
    mid[i] = malloc(256);
    CHECK(mid[i] != NULL, "malloc");
    memset(mid[i], i & 0xff, 256);
    mid_freed += !kept(i);
  }
  for (int i = 0; i < LARGE; i++) {
    large[i] = malloc(200000);
    CHECK(large[i] != NULL, "malloc");
    large_bytes += malloc_usable_size(large[i]);
  }
  hsmalloc_heap_stats_t s1 = self();
  pthread_t c;
  CHECK(pthread_create(&c, NULL, consumer, NULL) == 0, "pthread_create");
  CHECK(pthread_join(c, NULL) == 0, "pthread_join");
  hsmalloc_heap_stats_t s2 = self();
  printf("queued blocks %llu bytes %llu drains %llu\n",
         (unsigned long long)(s2.rfq_blocks - s1.rfq_blocks),
         (unsigned long long)(s2.rfq_bytes - s1.rfq_bytes),
         (unsigned long long)(s2.rfq_drains - s1.rfq_drains));

  /* the freed 64-byte blocks, sorted, to tell reused ones (this malloc's slow
   * path drains the queue: the figures below see the blocks back on their
   * pages) */
  void **freed = malloc(sizeof(void *) * (size_t)small_freed);
  CHECK(freed != NULL, "malloc");
  size_t nf = 0;
  for (int i = 0; i < N; i++)
    if (!kept(i))
      freed[nf++] = small[i];
  sort_ptrs(freed, nf);
  hsmalloc_heap_stats_t s3 = self();
  size_t reused = 0;
  for (int i = 0; i < N; i++) {
    if (!kept(i)) {
      small[i] = malloc(64);
      CHECK(small[i] != NULL, "malloc");
      reused += bsearch(&small[i], freed, nf, sizeof *freed, cmp_ptr) != NULL;
      memset(small[i], i & 0xff, 64);
    }
  }
  hsmalloc_heap_stats_t s4 = self();
  printf("drained blocks %llu bytes %llu drains %llu\n",
         (unsigned long long)(s4.rfq_blocks - s1.rfq_blocks),
         (unsigned long long)(s4.rfq_bytes - s1.rfq_bytes),
         (unsigned long long)(s4.rfq_drains - s1.rfq_drains));
  printf("reused %zu of %llu grown %lld\n", reused,
         (unsigned long long)small_freed,
         (long long)(s4.page_bytes - s3.page_bytes));
  /* every block distinct, contents intact */
  qsort(small, N, sizeof *small, cmp_ptr);
  for (int i = 1; i < N; i++)
    CHECK((uintptr_t)small[i] - (uintptr_t)small[i - 1] >= 64,
          "blocks %p and %p overlap", small[i - 1], small[i]);
  for (int i = 0; i < M; i++)
    if (kept(i))
      for (int j = 0; j < 256; j++)
        CHECK(((unsigned char *)mid[i])[j] == (i & 0xff), "block %d changed",
              i);
  for (int i = 0; i < N; i++)
    free(small[i]);
  for (int i = 0; i < M; i++)
    if (kept(i))
      free(mid[i]);
  free(freed);
  (void)mid_freed;
  (void)large_bytes;
  hsmalloc_collect();
  hsmalloc_heap_stats_t s5 = self();
  printf("end page_bytes %lld\n", (long long)(s5.page_bytes - s0.page_bytes));
  printf(
      "expect blocks %llu bytes %llu\n",
      (unsigned long long)(small_freed + mid_freed + LARGE),
      (unsigned long long)(small_freed * 64 + mid_freed * 256 + large_bytes));
  return 0;
}
