/* Huge blocks reused before anything is faulted in again (huge.c), as in
 * mimalloc-bench's malloc-large: a few live blocks of 5-25 MiB, one replaced at
 * a time (the new one allocated before the old one is freed), every byte
 * written. churn    SLOTS live blocks, ROUNDS replacements (sizes from a fixed
 * LCG); prints "touched_pages T minflt F rss_peak R live_peak L": the 4 KiB
 * pages the blocks wrote, the minor faults of the replacements (getrusage), the
 * most the resident set grew (/proc/self/statm) and the most bytes live at once
 *   rebuilt  mesh-refine's pattern: every step a list grows by doubling from 64 KiB
 * to 8 MiB (copied, the old one freed) and is freed at the end, while the
 * program's objects grow by 512 KiB a step (64 KiB blocks, kept: fresh memory
 * in segments); prints "touched_pages T minflt F rss_peak R live_peak L" as
 * churn does, over the steps after the first
 *   calloc   a 10 MiB block filled with 0xab and freed, then calloc of 12 MiB
 * (made of the freed block's pages and fresh ones) and of 6 MiB after a 9 MiB
 * block freed (a piece split off): prints "zero 1" when both read as zero
 *   shrink   UMFPACK's pattern (Octave's sparse solve): a 17,229,680-byte workspace,
 * every byte written, realloc'ed to 6,688,928 bytes, then freed; prints "moved M usable
 * U rss_full F rss_after A live_after L kept K": whether the block moved, its usable
 * size, how much the resident set grew with the whole workspace and after the realloc,
 * the allocator's live bytes then (allocated_now minus before), and whether the kept
 * part's contents survived (1)
 *   grow     UMFPACK's other pattern (Octave's sparse lu), a quarter of its sizes: a
 * 23,301,500-byte workspace, every byte written, realloc'ed to 37,132,732 bytes and its
 * growth written; prints the same figures (rss_full: after the growth is written)
 *   grow_here  a 4 MiB block mapped below an 8 MiB one that is then freed (run with
 * HSMALLOC_CACHE_SEGMENTS=0: unmapped), realloc'ed to 10 MiB: prints "moved M kept K"
 *   grow_overflow  an 8 MiB block realloc'ed to 12 MiB, then one byte written past the new
 * request and the block freed (secure mode's canary is after the new request)
 *   last     gmsh's end: its biggest array (24 MiB, written) freed, then 8 MiB of 1 KiB
 * blocks made and written; prints "rss_freed F rss_end E": how much the resident set
 * grew from before the array, after its free and at the end */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hsmalloc.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check.h"

#define SLOTS 8
#define ROUNDS 300
#define MIB ((size_t)1 << 20)

static long long rss_bytes(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  CHECK(f != NULL && fscanf(f, "%ld %ld", &pages, &resident) == 2, "statm");
  fclose(f);
  return (long long)resident * sysconf(_SC_PAGESIZE);
}

static long minflt(void) {
  struct rusage ru;
  CHECK(getrusage(RUSAGE_SELF, &ru) == 0, "getrusage");
  return ru.ru_minflt;
}

static int report(long long touched, long faults, long long rss_peak,
                  long long live_peak) {
  printf("touched_pages %lld minflt %ld rss_peak %lld live_peak %lld\n",
         touched, faults, rss_peak, live_peak);
  return 0;
}

static int churn(void) {
  char *slot[SLOTS] = {0};
  size_t size[SLOTS] = {0};
  uint64_t x = 42;
  long long rss0 = rss_bytes(), rss_peak = 0, live = 0, live_peak = 0,
            touched = 0;
  long f0 = minflt();
  for (int r = 0; r < ROUNDS; r++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    int i = (int)((x >> 33) % SLOTS);
    size_t n = 5 * MIB + (size_t)((x >> 20) % (20 * MIB));
    char *p = malloc(n);
    CHECK(p != NULL, "malloc(%zu)", n);
    memset(p, r & 0xff, n);
    touched += (long long)((n + 4095) / 4096);
    live += (long long)n;
    if (live > live_peak)
      live_peak = live;
    if (rss_bytes() - rss0 > rss_peak)
      rss_peak = rss_bytes() - rss0;
    if (slot[i] != NULL) {
      CHECK((unsigned char)slot[i][size[i] - 1] == (unsigned char)slot[i][0],
            "contents");
      free(slot[i]);
      live -= (long long)size[i];
    }
    slot[i] = p;
    size[i] = n;
  }
  long faults = minflt() - f0;
  for (int i = 0; i < SLOTS; i++)
    free(slot[i]);
  return report(touched, faults, rss_peak, live_peak);
}

#define STEPS 40
static int rebuilt(void) {
  char *kept[STEPS * 8];
  int nkept = 0;
  long long rss0 = 0, rss_peak = 0, live = 0, live_peak = 0, touched = 0;
  long f0 = 0;
  for (int step = 0; step < STEPS; step++) {
    if (step == 1) { /* the first step's list is all fresh memory */
      rss0 = rss_bytes();
      f0 = minflt();
    }
    for (int k = 0; k < 8; k++) {
      kept[nkept] = malloc(64 << 10);
      CHECK(kept[nkept] != NULL, "malloc");
      memset(kept[nkept++], k, 64 << 10);
      live += 64 << 10;
    }
    size_t n = 64 << 10;
    char *list = malloc(n);
    CHECK(list != NULL, "malloc");
    memset(list, step & 0xff, n);
    while (n < 8 * MIB) {
      char *grown = malloc(2 * n);
      CHECK(grown != NULL, "malloc(%zu)", 2 * n);
      memcpy(grown, list, n);
      memset(grown + n, step & 0xff, n);
      if (step > 0) {
        touched += (long long)(2 * n / 4096);
        if (live + (long long)(3 * n) > live_peak)
          live_peak = live + (long long)(3 * n);
        if (rss_bytes() - rss0 > rss_peak)
          rss_peak = rss_bytes() - rss0;
      }
      free(list);
      list = grown;
      n *= 2;
    }
    CHECK((unsigned char)list[n - 1] == (unsigned char)(step & 0xff), "contents");
    free(list);
  }
  long faults = minflt() - f0;
  for (int i = 0; i < nkept; i++)
    free(kept[i]);
  return report(touched, faults, rss_peak, live_peak);
}

static int all_zero(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != 0)
      return 0;
  return 1;
}

static int calloc_case(void) {
  /* a bigger block freed first: the cache keeps the next ones resident (the biggest
   * block freed so far goes back at its free) */
  char *big = malloc(16 * MIB);
  CHECK(big != NULL, "malloc");
  memset(big, 0xef, 16 * MIB);
  __asm__ volatile("" : : "r"(big) : "memory");
  free(big);
  char *p = malloc(10 * MIB);
  CHECK(p != NULL, "malloc");
  memset(p, 0xab, 10 * MIB);
  free(p);
  unsigned char *q = calloc(1, 12 * MIB);
  CHECK(q != NULL, "calloc");
  int zero = all_zero(q, 12 * MIB);
  free(q);
  char *r = malloc(9 * MIB);
  CHECK(r != NULL, "malloc");
  memset(r, 0xcd, 9 * MIB);
  free(r);
  unsigned char *s = calloc(6, MIB);
  CHECK(s != NULL, "calloc");
  zero &= all_zero(s, 6 * MIB);
  free(s);
  printf("zero %d\n", zero);
  return 0;
}

static long long allocated_now(void) {
  hsmalloc_stats_t st;
  CHECK(hsmalloc_stats_get(&st) == 0, "hsmalloc_stats_get");
  return (long long)st.allocated_now;
}

/* A block of `from` bytes, every byte written, realloc'ed to `to`; a growth written too.
 * rss_full: the resident set's growth with the bigger size written. */
static int resize(size_t from, size_t to) {
  long long rss0 = rss_bytes(), live0 = allocated_now();
  unsigned char *p = malloc(from);
  CHECK(p != NULL, "malloc");
  for (size_t i = 0; i < from; i++)
    p[i] = (unsigned char)(i * 7);
  long long rss_full = rss_bytes() - rss0;
  unsigned char *q = realloc(p, to);
  CHECK(q != NULL, "realloc");
  long long rss_after = rss_bytes() - rss0, live_after = allocated_now() - live0;
  int same = 1;
  for (size_t i = 0; i < (from < to ? from : to); i++)
    same &= q[i] == (unsigned char)(i * 7);
  if (to > from) {
    memset(q + from, 1, to - from);
    rss_full = rss_bytes() - rss0;
  }
  printf("moved %d usable %zu rss_full %lld rss_after %lld live_after %lld kept %d\n",
         q != p, malloc_usable_size(q), rss_full, rss_after, live_after, same);
  free(q);
  return 0;
}

static int grow_here(void) {
  char *above = malloc(8 * MIB), *p = malloc(4 * MIB);
  CHECK(above != NULL && p != NULL, "malloc");
  CHECK(p + 4 * MIB <= above, "the second block was mapped below the first");
  memset(p, 0x5a, 4 * MIB);
  free(above);
  char *q = realloc(p, 10 * MIB);
  CHECK(q != NULL, "realloc");
  printf("moved %d kept %d\n", q != p, q[0] == 0x5a && q[4 * MIB - 1] == 0x5a);
  free(q);
  return 0;
}

static int grow_overflow(void) {
  char *p = malloc(8 * MIB);
  CHECK(p != NULL, "malloc");
  char *q = realloc(p, 12 * MIB);
  CHECK(q != NULL, "realloc");
  /* changed, not set: the canary's byte there is a key's hash, 1 once in 256 runs */
  ((volatile char *)q)[12 * MIB] ^= 0x5a;
  free(q);
  printf("undetected 1\n");
  return 0;
}

static int last(void) {
  long long base = rss_bytes();
  char *big = malloc(24 * MIB);
  CHECK(big != NULL, "malloc");
  memset(big, 0x5a, 24 * MIB);
  __asm__ volatile("" : : "r"(big) : "memory"); /* the compiler must not elide the pair */
  free(big);
  long long freed = rss_bytes() - base;
  enum { SMALL = 1024, COUNT = 8 * 1024 };
  static char *small[COUNT];
  for (int i = 0; i < COUNT; i++) {
    small[i] = malloc(SMALL);
    CHECK(small[i] != NULL, "malloc");
    memset(small[i], 0x5a, SMALL);
    __asm__ volatile("" : : "r"(small[i]) : "memory");
  }
  printf("rss_freed %lld rss_end %lld\n", freed, rss_bytes() - base);
  for (int i = 0; i < COUNT; i++) free(small[i]);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "churn") == 0)
    return churn();
  if (argc == 2 && strcmp(argv[1], "calloc") == 0)
    return calloc_case();
  if (argc == 2 && strcmp(argv[1], "rebuilt") == 0)
    return rebuilt();
  if (argc == 2 && strcmp(argv[1], "shrink") == 0)
    return resize(17229680, 6688928);
  if (argc == 2 && strcmp(argv[1], "grow") == 0)
    return resize(23301500, 37132732);
  if (argc == 2 && strcmp(argv[1], "grow_here") == 0)
    return grow_here();
  if (argc == 2 && strcmp(argv[1], "grow_overflow") == 0)
    return grow_overflow();
  if (argc == 2 && strcmp(argv[1], "last") == 0)
    return last();
  fprintf(stderr, "usage: huge_reuse churn|rebuilt|calloc|shrink|grow|grow_here|grow_overflow|last\n");
  return 2;
}
