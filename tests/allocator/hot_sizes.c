/* hsmalloc's hot-size classes, checked exactly. Every check runs in a fresh
 * thread (a fresh heap, whose first HSM_HOT_SAMPLE = 1024 allocations are its
 * first detection window) that allocates nothing but what it counts; the
 * statistics are taken before and after it, so the differences are exactly its
 * allocations.
 *
 * Runs under LD_PRELOAD=libhsmalloc.so with one mode:
 *   detect         rounds of 4 x 520, 2 x 1030, 2 x 2050 and 1 x 600 bytes: the
 * first three take 44%, 22% and 22% (>= 1/8) and get the classes 528, 1040 and
 * 2064 once the window closed; 600 (11%) keeps its fixed class 640. The hot
 * rows count exactly the allocations after the window, with requested =
 * 520/1030/2050 each and allocated = the class size each; after all is freed
 * the rows show frees = allocs, live 0, and the empty pages postponed free kept
 * (256 KiB per class at most). seeded LIST    HSMALLOC_HOT_SIZES names the
 * classes (LIST: the expected class sizes, or "none"): from the thread's first
 * allocation, usable sizes are the classes, and the hot rows count every
 * allocation retire         with HSMALLOC_HOT_RESAMPLE_MS=0: a phase of
 * 528-byte blocks (kept live), then a phase of 1040 only: 528 retires (its
 * sizes go back to 576), 1040 is promoted; the phase-one blocks keep their
 * contents and their usable size (528 after the first window), and free into
 * the retired class's row packed         rounds of 2 x 20, 1 x 36 and 1 x 100
 * bytes: packed classes make every 8-byte step up to 128 a class, so the fixed
 * classes 24, 40 and 104 fit them exactly and no hot class is made named C
 * LO     HSMALLOC_HOT_SIZES names one size whose class is C, serving LO..C:
 *                  every size 9..40, 100 times: usable size C for LO..C, the
 * row of C counts exactly those allocations and their requested bytes pattern
 * the seeded mode's allocations alone (500 rounds), for the recorder
 *   big [named]    rounds of 3 x 4112, 2 x 16400, 2 x 65552 and 1 x 131088
 * bytes (arrays of 2^k + 2 doubles), each block written and freed: all four get
 * hot classes of exactly their size (131088: above 128 KiB, a large block
 * before), after the window (from the first allocation with "named":
 * HSMALLOC_HOT_SIZES names them); the rows count exactly the allocations after
 * it
 *   bigcache       HSMALLOC_HOT_SIZES=16400: 200 rounds of 16 blocks of 16400
 * bytes allocated, written, checked and freed; the row counts them exactly, and
 * "slow N" tells how many left the fast path
 * Prints "ok <mode> checks=<n>", or the first failed check and exits 1. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"

#define SAMPLE 1024             /* allocations in a detection window */
#define KEEP_BYTES (256 * 1024) /* postponed free bound per class */
#define SLICE (64 * 1024)

static int (*stats_get)(hsmalloc_stats_t *);
static int (*owns)(const void *);
static hsmalloc_stats_t before, after;

static size_t round16(size_t n) { return (n + 15) / 16 * 16; }

/* The hot row of class size `size` in st, or NULL. */
static const hsmalloc_hot_stats_t *row(const hsmalloc_stats_t *st,
                                       uint64_t size) {
  for (uint64_t k = 0; k < st->hot_classes; k++)
    if (st->hot[k].size == size)
      return &st->hot[k];
  return NULL;
}

/* A field of the hot row of `size` after minus before (a row absent before
 * counts 0). */
#define DELTA(size, field)                                                     \
  (row(&after, size)->field -                                                  \
   (row(&before, size) ? row(&before, size)->field : 0))

/* Pages of a hot class span the 1..4 slices that waste the least
 * (docs/hsmalloc.md). */
static size_t kept_bound(size_t cls) {
  size_t best = 1;
  for (size_t n = 2; n <= 4; n++)
    if ((n * SLICE) % cls * best < (best * SLICE) % cls * n)
      best = n;
  return KEEP_BYTES / (best * SLICE);
}

static void run_in_thread(void *(*fn)(void *), void *arg) {
  stats_get(&before);
  pthread_t t;
  pthread_create(&t, NULL, fn, arg);
  pthread_join(t, NULL);
}

/* ---- detect ---- */

#define ROUNDS 4000
static const size_t round_sizes[9] = {520,  1030, 520, 2050, 520,
                                      1030, 2050, 520, 600};
static void *blocks[ROUNDS * 9];

static void *detect_thread(void *arg) {
  (void)arg;
  long n = 0;
  for (int r = 0; r < ROUNDS; r++)
    for (int k = 0; k < 9; k++)
      blocks[n++] = malloc(round_sizes[k]);
  for (long i = 0; i < n; i++) {
    size_t want = round_sizes[i % 9];
    size_t expect = i < SAMPLE    ? (want == 520    ? 576
                                     : want == 1030 ? 1152
                                     : want == 2050 ? 2304
                                                    : 640)
                    : want == 600 ? 640
                                  : round16(want);
    CHECK(malloc_usable_size(blocks[i]) == expect,
          "allocation %ld of %zu: usable %zu, expected %zu", i, want,
          malloc_usable_size(blocks[i]), expect);
  }
  for (long i = 0; i < n; i++)
    free(blocks[i]);
  stats_get(&after); /* before the thread exits: its kept pages go back then */
  return NULL;
}

static void check_detected(void) {
  static const size_t sizes[3] = {520, 1030, 2050};
  for (int c = 0; c < 3; c++) {
    size_t cls = round16(sizes[c]);
    long per_round = 0, in_window = 0;
    for (int k = 0; k < 9; k++)
      per_round += round_sizes[k] == sizes[c];
    for (long i = 0; i < SAMPLE; i++)
      in_window += round_sizes[i % 9] == sizes[c];
    uint64_t hot = (uint64_t)(per_round * ROUNDS - in_window);
    const hsmalloc_hot_stats_t *r = row(&after, cls);
    CHECK(r != NULL, "no hot row for %zu", cls);
    CHECK(DELTA(cls, allocs) == hot, "%zu: allocs %llu, expected %llu", cls,
          (unsigned long long)DELTA(cls, allocs), (unsigned long long)hot);
    CHECK(DELTA(cls, frees) == hot, "%zu: frees %llu", cls,
          (unsigned long long)DELTA(cls, frees));
    CHECK(DELTA(cls, requested_bytes) == hot * sizes[c], "%zu: requested %llu",
          cls, (unsigned long long)DELTA(cls, requested_bytes));
    CHECK(DELTA(cls, allocated_bytes) == hot * cls, "%zu: allocated %llu", cls,
          (unsigned long long)DELTA(cls, allocated_bytes));
    CHECK(r->live == 0, "%zu: live %llu", cls, (unsigned long long)r->live);
    CHECK(DELTA(cls, slow_allocs) <= hot, "%zu: slow > allocs", cls);
    CHECK(r->kept_pages == kept_bound(cls),
          "%zu: kept %llu pages, expected %zu", cls,
          (unsigned long long)r->kept_pages, kept_bound(cls));
    CHECK(r->seeded == 0, "%zu: seeded", cls);
  }
  CHECK(row(&after, 608) == NULL && row(&after, 640) == NULL,
        "600 bytes got a hot class");
}

/* ---- seeded ---- */

static size_t seed_expect[8];
static int seed_n;

static void *seeded_thread(void *arg) {
  (void)arg;
  for (int r = 0; r < 500; r++) {
    for (int k = 0; k < 9; k++) {
      size_t want = round_sizes[k];
      void *p = malloc(want);
      size_t expect = want == 600    ? 640
                      : want == 520  ? 576
                      : want == 1030 ? 1152
                                     : 2304;
      for (int s = 0; s < seed_n; s++)
        if (seed_expect[s] == round16(want))
          expect = round16(want);
      CHECK(malloc_usable_size(p) == expect,
            "round %d: %zu bytes: usable %zu, expected %zu", r, want,
            malloc_usable_size(p), expect);
      free(p);
    }
  }
  stats_get(&after);
  return NULL;
}

static void check_seeded(void) {
  for (int s = 0; s < seed_n; s++) {
    size_t cls = seed_expect[s];
    const hsmalloc_hot_stats_t *r = row(&after, cls);
    CHECK(r != NULL && r->seeded == 1, "%zu: not a seeded row", cls);
    uint64_t per_round = 0, req = 0;
    for (int k = 0; k < 9; k++)
      if (round16(round_sizes[k]) == cls)
        per_round++, req += round_sizes[k];
    CHECK(DELTA(cls, allocs) == 500 * per_round,
          "%zu: allocs %llu, expected %llu", cls,
          (unsigned long long)DELTA(cls, allocs),
          (unsigned long long)(500 * per_round));
    CHECK(DELTA(cls, requested_bytes) == 500 * req, "%zu: requested", cls);
    CHECK(r->heaps >= 1, "%zu: installed in no heap", cls);
  }
}

/* ---- retire ---- */

#define PHASE1 6000
#define PHASE2 40000
static unsigned char *phase1[PHASE1];
static void *phase2[PHASE2];

static void *retire_thread(void *arg) {
  (void)arg;
  for (int i = 0; i < PHASE1; i++) {
    phase1[i] = malloc(528);
    memset(phase1[i], (unsigned char)i, 528);
  }
  CHECK(malloc_usable_size(phase1[PHASE1 - 1]) == 528,
        "528 not hot in phase one: %zu",
        malloc_usable_size(phase1[PHASE1 - 1]));
  for (int i = 0; i < PHASE2; i++)
    phase2[i] = malloc(1040);
  for (int i = 0; i < PHASE2; i++)
    free(phase2[i]);
  for (int i = 0; i < PHASE2; i++)
    phase2[i] = malloc(1040);
  void *probe = malloc(528);
  CHECK(malloc_usable_size(probe) == 576, "528 not retired: usable %zu",
        malloc_usable_size(probe));
  CHECK(malloc_usable_size(phase2[PHASE2 - 1]) == 1040,
        "1040 not promoted: usable %zu",
        malloc_usable_size(phase2[PHASE2 - 1]));
  free(probe);
  stats_get(&after);
  const hsmalloc_hot_stats_t *r = row(&after, 528);
  CHECK(r != NULL && r->retirements >= 1 && r->heaps == 0,
        "528: no retirement recorded");
  for (int i = 0; i < PHASE1; i++) {
    for (int k = 0; k < 528; k++)
      CHECK(phase1[i][k] == (unsigned char)i,
            "block %d byte %d changed after retirement", i, k);
    size_t expect =
        i < SAMPLE ? 576 : 528; /* the first window's blocks: fixed class */
    CHECK(malloc_usable_size(phase1[i]) == expect,
          "block %d: usable %zu after retirement", i,
          malloc_usable_size(phase1[i]));
    CHECK(owns(phase1[i]), "block %d not owned", i);
    free(phase1[i]);
  }
  for (int i = 0; i < PHASE2; i++)
    free(phase2[i]);
  stats_get(&after);
  r = row(&after, 528);
  CHECK(r->live == 0 && r->frees == r->allocs, "528: frees %llu of %llu allocs",
        (unsigned long long)r->frees, (unsigned long long)r->allocs);
  return NULL;
}

/* ---- small: a hot class up to 128 bytes takes only its own 8-byte step ----
 */

/* With HSMALLOC_HOT_SIZES=48: 41-48 bytes come from the hot class, 33-40 stay
 * in the packed class of 40 (exact already), 100 times each. */
static void *small_thread(void *arg) {
  (void)arg;
  for (int r = 0; r < 100; r++)
    for (size_t n = 33; n <= 48; n++) {
      void *volatile p = malloc(n);
      size_t expect = n <= 40 ? 40 : 48;
      CHECK(malloc_usable_size(p) == expect,
            "%zu bytes: usable %zu, expected %zu", n, malloc_usable_size(p),
            expect);
      free(p);
    }
  stats_get(&after);
  const hsmalloc_hot_stats_t *r = row(&after, 48);
  CHECK(r != NULL && r->seeded == 1, "48: not a seeded row");
  CHECK(DELTA(48, allocs) == 100 * 8,
        "48: allocs %llu, expected 800 (41-48 only)",
        (unsigned long long)DELTA(48, allocs));
  return NULL;
}

/* ---- packed: no hot class where the fixed class is exact ---- */

static const size_t packed_sizes[4] = {20, 20, 36, 100};
#define PACKED_ALLOCS 4000

/* 20, 36 and 100 bytes take 50%, 25% and 25% of the window, but the packed
 * fixed classes 24, 40 and 104 fit them as a hot class would: no hot class is
 * made (it would only hold a second set of pages), and the blocks keep their
 * fixed classes. */
static void *packed_thread(void *arg) {
  (void)arg;
  stats_get(&before);
  for (long i = 0; i < PACKED_ALLOCS; i++) {
    void *volatile p = malloc(packed_sizes[i % 4]);
    size_t expect = packed_sizes[i % 4] + 4;
    CHECK(malloc_usable_size(p) == expect,
          "%zu bytes: usable %zu, expected %zu", packed_sizes[i % 4],
          malloc_usable_size(p), expect);
    free(p);
  }
  stats_get(&after);
  for (size_t size = 16; size <= 128; size += 8)
    CHECK(row(&after, size) == NULL,
          "a hot class of %zu, which its fixed class fits", size);
  return NULL;
}

/* ---- named C LO: a named size's class serves exactly LO..C ---- */

static size_t named_class, named_lo;

static void *named_thread(void *arg) {
  (void)arg;
  stats_get(&before);
  uint64_t hot = 0, req = 0;
  for (int r = 0; r < 100; r++)
    for (size_t n = 9; n <= 40; n++) {
      void *volatile p = malloc(n);
      int in = n >= named_lo && n <= named_class;
      hot += in, req += in ? n : 0;
      CHECK(!in || malloc_usable_size(p) == named_class,
            "%zu bytes: usable %zu, expected %zu", n, malloc_usable_size(p),
            named_class);
      free(p);
    }
  stats_get(&after);
  const hsmalloc_hot_stats_t *r = row(&after, named_class);
  CHECK(r != NULL && r->seeded == 1, "%zu: not a seeded row", named_class);
  CHECK(DELTA(named_class, allocs) == hot &&
            DELTA(named_class, requested_bytes) == req,
        "%zu: allocs %llu requested %llu, expected %llu and %llu", named_class,
        (unsigned long long)DELTA(named_class, allocs),
        (unsigned long long)DELTA(named_class, requested_bytes),
        (unsigned long long)hot, (unsigned long long)req);
  return NULL;
}

/* ---- big: hot classes above 4 KiB ---- */

#define BIG_ROUNDS 400
static const size_t big_sizes[8] = {4112, 16400, 4112,  65552,
                                    4112, 16400, 65552, 131088};
static int big_named;

static size_t big_fixed(size_t want) { /* the fixed class, or the large block */
  return want == 4112    ? 4608
         : want == 16400 ? 18432
         : want == 65552 ? 73728
                         : 3 * SLICE;
}

static void *big_thread(void *arg) {
  (void)arg;
  long n = 0;
  for (int r = 0; r < BIG_ROUNDS; r++) {
    void *p[8];
    for (int k = 0; k < 8; k++, n++) {
      size_t want = big_sizes[k];
      p[k] = malloc(want);
      CHECK(p[k] != NULL, "malloc(%zu)", want);
      memset(p[k], k, want);
      size_t expect = n < SAMPLE && !big_named ? big_fixed(want) : want;
      CHECK(malloc_usable_size(p[k]) == expect,
            "allocation %ld of %zu: usable %zu, expected %zu", n, want,
            malloc_usable_size(p[k]), expect);
    }
    for (int k = 0; k < 8; k++) {
      CHECK(((unsigned char *)p[k])[big_sizes[k] - 1] == k, "contents of %zu",
            big_sizes[k]);
      free(p[k]);
    }
  }
  stats_get(&after);
  return NULL;
}

static void check_big(void) {
  static const size_t sizes[4] = {4112, 16400, 65552, 131088};
  for (int c = 0; c < 4; c++) {
    long per_round = 0, in_window = 0;
    for (int k = 0; k < 8; k++)
      per_round += big_sizes[k] == sizes[c];
    for (long i = 0; i < SAMPLE && !big_named; i++)
      in_window += big_sizes[i % 8] == sizes[c];
    uint64_t hot = (uint64_t)(per_round * BIG_ROUNDS - in_window);
    const hsmalloc_hot_stats_t *r = row(&after, sizes[c]);
    CHECK(r != NULL, "no hot row for %zu", sizes[c]);
    CHECK(DELTA(sizes[c], allocs) == hot, "%zu: allocs %llu, expected %llu",
          sizes[c], (unsigned long long)DELTA(sizes[c], allocs),
          (unsigned long long)hot);
    CHECK(DELTA(sizes[c], frees) == hot, "%zu: frees %llu", sizes[c],
          (unsigned long long)DELTA(sizes[c], frees));
    CHECK(DELTA(sizes[c], requested_bytes) == hot * sizes[c], "%zu: requested",
          sizes[c]);
    CHECK(DELTA(sizes[c], allocated_bytes) == hot * sizes[c], "%zu: allocated",
          sizes[c]);
    CHECK(r->live == 0, "%zu: live %llu", sizes[c],
          (unsigned long long)r->live);
    CHECK(r->seeded == big_named, "%zu: seeded %d", sizes[c], r->seeded);
  }
}

/* ---- bigcache: a hot class above 4 KiB allocated and freed in batches ---- */

#define BC_ROUNDS 200
#define BC_BLOCKS 16
#define BC_SIZE 16400

static void *bigcache_thread(void *arg) {
  (void)arg;
  for (int r = 0; r < BC_ROUNDS; r++) {
    void *p[BC_BLOCKS];
    for (int k = 0; k < BC_BLOCKS; k++) {
      p[k] = malloc(BC_SIZE);
      CHECK(p[k] != NULL && malloc_usable_size(p[k]) == BC_SIZE,
            "round %d: malloc(%d)", r, BC_SIZE);
      memset(p[k], r, BC_SIZE);
    }
    for (int k = 0; k < BC_BLOCKS; k++) {
      CHECK(((unsigned char *)p[k])[BC_SIZE - 1] == (unsigned char)r,
            "round %d: contents", r);
      free(p[k]);
    }
  }
  stats_get(&after);
  return NULL;
}

/* Exact rows; the slow paths are the test's to judge (tests/allocator). */
static void check_bigcache(void) {
  const hsmalloc_hot_stats_t *r = row(&after, BC_SIZE);
  CHECK(r != NULL, "no hot row for %d", BC_SIZE);
  CHECK(DELTA(BC_SIZE, allocs) == BC_ROUNDS * BC_BLOCKS, "allocs %llu",
        (unsigned long long)DELTA(BC_SIZE, allocs));
  CHECK(DELTA(BC_SIZE, frees) == BC_ROUNDS * BC_BLOCKS, "frees %llu",
        (unsigned long long)DELTA(BC_SIZE, frees));
  printf("slow %llu\n", (unsigned long long)DELTA(BC_SIZE, slow_allocs));
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: hot_sizes detect|seeded "
                    "LIST|retire|small|packed|named C LO|pattern\n");
    return 2;
  }
  if (strcmp(argv[1], "pattern") ==
      0) { /* for the recorder: the allocations only */
    for (int r = 0; r < 500; r++) {
      for (int k = 0; k < 9; k++) {
        void *volatile p =
            malloc(round_sizes[k]); /* volatile: the pair is not elided */
        free(p);
      }
    }
    return 0;
  }
  stats_get =
      (int (*)(hsmalloc_stats_t *))dlsym(RTLD_DEFAULT, "hsmalloc_stats_get");
  owns = (int (*)(const void *))dlsym(RTLD_DEFAULT, "hsmalloc_owns");
  if (stats_get == NULL || owns == NULL) {
    fprintf(stderr, "hsmalloc is not preloaded\n");
    return 2;
  }
  const char *mode = argv[1];
  if (strcmp(mode, "detect") == 0) {
    run_in_thread(detect_thread, NULL);
    check_detected();
  } else if (strcmp(mode, "seeded") == 0 && argc == 3) {
    if (strcmp(argv[2], "none") != 0)
      for (char *s = strtok(argv[2], ","); s && seed_n < 8;
           s = strtok(NULL, ","))
        seed_expect[seed_n++] = (size_t)atol(s);
    run_in_thread(seeded_thread, NULL);
    check_seeded();
  } else if (strcmp(mode, "retire") == 0) {
    run_in_thread(retire_thread, NULL);
  } else if (strcmp(mode, "small") == 0) {
    run_in_thread(small_thread, NULL);
  } else if (strcmp(mode, "packed") == 0) {
    run_in_thread(packed_thread, NULL);
  } else if (strcmp(mode, "big") == 0) {
    big_named = argc == 3 && strcmp(argv[2], "named") == 0;
    run_in_thread(big_thread, NULL);
    check_big();
  } else if (strcmp(mode, "bigcache") == 0) {
    run_in_thread(bigcache_thread, NULL);
    check_bigcache();
  } else if (strcmp(mode, "named") == 0 && argc == 4) {
    named_class = (size_t)atol(argv[2]);
    named_lo = (size_t)atol(argv[3]);
    run_in_thread(named_thread, NULL);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  printf("ok %s checks=%ld\n", mode, checks);
  return 0;
}
