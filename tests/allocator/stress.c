/* Multi-threaded allocator stress: waves of threads allocate random sizes
 * (1 B .. 1 MiB, skewed small), hand objects to each other through a shared
 * mailbox (so most frees are remote, between live threads), and exit with live
 * objects that the next wave verifies and frees. Every object carries a cookie
 * (size, seed) and a seeded byte pattern that is checked before it is freed.
 *
 *   stress [threads-per-wave=32] [waves=3] [ops-per-thread=20000]
 *
 * Built with -DUSE_HSMALLOC_API it calls hsmalloc_* directly (for the
 * ThreadSanitizer build, where the sanitizer owns the malloc symbols). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef USE_HSMALLOC_API
#include "hsmalloc.h"
#define MALLOC hsmalloc_malloc
#define CALLOC hsmalloc_calloc
#define REALLOC hsmalloc_realloc
#define MEMALIGN hsmalloc_memalign
#define FREE hsmalloc_free
#define USABLE hsmalloc_usable_size
#else
#include <malloc.h>
#define MALLOC malloc
#define CALLOC calloc
#define REALLOC realloc
#define MEMALIGN memalign
#define FREE free
#define USABLE malloc_usable_size
#endif

#define MAILBOX 512
#define LOCAL 48

typedef struct {
  uint64_t size, seed;
} cookie_t;

static _Atomic(cookie_t *) mailbox[MAILBOX];
static pthread_mutex_t orphans_lock = PTHREAD_MUTEX_INITIALIZER;
static cookie_t **orphans;
static size_t orphans_n, orphans_cap;
static _Atomic uint64_t made, verified, handed;
static int ops_per_thread = 20000;

static uint64_t rnd(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void die(const char *what, cookie_t *c) {
  fprintf(stderr, "stress: %s (object %p)\n", what, (void *)c);
  abort();
}

static size_t pick_size(uint64_t *s) {
  uint64_t r = rnd(s) % 1000;
  if (r < 900)
    return 1 + rnd(s) % 1024;
  if (r < 990)
    return 1 + rnd(s) % 65536;
  return 1 + rnd(s) % (1u << 20);
}

static void stamp(cookie_t *c, size_t size, uint64_t seed) {
  if (size < sizeof *c)
    die("short object", c);
  c->size = size;
  c->seed = seed;
  unsigned char *p = (unsigned char *)(c + 1);
  size_t n = size - sizeof *c;
  for (size_t i = 0; i < n; i++)
    p[i] = (unsigned char)(seed + i * 7);
}

static void check(cookie_t *c) {
  if (c->size < sizeof *c || c->size > (1u << 20) + sizeof *c)
    die("cookie size corrupted", c);
  if (USABLE(c) < c->size)
    die("usable size below requested", c);
  const unsigned char *p = (const unsigned char *)(c + 1);
  size_t n = c->size - sizeof *c;
  for (size_t i = 0; i < n; i++)
    if (p[i] != (unsigned char)(c->seed + i * 7))
      die("contents corrupted", c);
  atomic_fetch_add_explicit(&verified, 1, memory_order_relaxed);
}

static cookie_t *make(uint64_t *s) {
  size_t size = pick_size(s) + sizeof(cookie_t);
  uint64_t kind = rnd(s) % 16;
  cookie_t *c;
  if (kind == 0) {
    c = CALLOC(1, size);
    if (c) {
      const unsigned char *z = (const unsigned char *)c;
      for (size_t i = 0; i < size; i++)
        if (z[i])
          die("calloc memory not zero", c);
    }
  } else if (kind == 1) {
    size_t align = (size_t)16 << (rnd(s) % 12);
    c = MEMALIGN(align, size);
    if (c && ((uintptr_t)c & (align - 1)))
      die("misaligned", c);
  } else {
    c = MALLOC(size);
  }
  if (c == NULL)
    die("out of memory", NULL);
  stamp(c, size, rnd(s));
  atomic_fetch_add_explicit(&made, 1, memory_order_relaxed);
  return c;
}

static cookie_t *regrow(cookie_t *c, uint64_t *s) {
  check(c);
  atomic_fetch_sub_explicit(&verified, 1, memory_order_relaxed);
  uint64_t old_seed = c->seed;
  size_t old = c->size, size = pick_size(s) + sizeof(cookie_t);
  cookie_t *n = REALLOC(c, size);
  if (n == NULL)
    die("realloc failed", c);
  size_t keep = (old < size ? old : size) - sizeof *n;
  const unsigned char *p = (const unsigned char *)(n + 1);
  for (size_t i = 0; i < keep; i++)
    if (p[i] != (unsigned char)(old_seed + i * 7))
      die("realloc lost contents", n);
  stamp(n, size, rnd(s));
  return n;
}

static void *worker(void *arg) {
  uint64_t s = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ull + 1;
  cookie_t *local[LOCAL] = {0};
  for (int op = 0; op < ops_per_thread; op++) {
    uint64_t r = rnd(&s) % 100;
    size_t i = rnd(&s) % LOCAL;
    if (r < 45) { /* allocate, or free and allocate */
      if (local[i]) {
        check(local[i]);
        FREE(local[i]);
      }
      local[i] = make(&s);
    } else if (r < 85) { /* hand over: swap with the mailbox */
      if (local[i] == NULL)
        local[i] = make(&s);
      cookie_t *got = atomic_exchange(&mailbox[rnd(&s) % MAILBOX], local[i]);
      atomic_fetch_add_explicit(&handed, 1, memory_order_relaxed);
      local[i] = NULL;
      if (got) {
        check(got);
        if (rnd(&s) & 1)
          FREE(got); /* remote free */
        else
          local[i] = got; /* keep someone else's object */
      }
    } else if (r < 92) {
      if (local[i])
        local[i] = regrow(local[i], &s);
    } else if (local[i]) {
      check(local[i]);
      FREE(local[i]);
      local[i] = NULL;
    }
  }
  /* Exit with live objects: leave them for the next wave. */
  pthread_mutex_lock(&orphans_lock);
  for (size_t i = 0; i < LOCAL; i++) {
    if (local[i] == NULL)
      continue;
    if (orphans_n == orphans_cap) {
      orphans_cap = orphans_cap ? 2 * orphans_cap : 256;
      orphans = REALLOC(orphans, orphans_cap * sizeof *orphans);
      if (orphans == NULL)
        die("orphans", NULL);
    }
    orphans[orphans_n++] = local[i];
  }
  pthread_mutex_unlock(&orphans_lock);
  return NULL;
}

static void *adopter(void *arg) {
  size_t part = (size_t)(uintptr_t)arg, parts = 4;
  pthread_mutex_lock(&orphans_lock);
  size_t n = orphans_n;
  cookie_t **list = orphans;
  pthread_mutex_unlock(&orphans_lock);
  for (size_t i = part; i < n; i += parts) {
    check(list[i]);
    FREE(list[i]);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 32;
  int waves = argc > 2 ? atoi(argv[2]) : 3;
  if (argc > 3)
    ops_per_thread = atoi(argv[3]);
  pthread_t *t = MALLOC(sizeof *t * (size_t)threads);
  uint64_t freed_orphans = 0;
  for (int w = 0; w < waves; w++) {
    for (int i = 0; i < threads; i++)
      if (pthread_create(&t[i], NULL, worker,
                         (void *)(uintptr_t)(w * threads + i + 1)) != 0)
        die("pthread_create", NULL);
    for (int i = 0; i < threads; i++)
      pthread_join(t[i], NULL);
    /* The exited threads' objects are verified and freed by new threads. */
    pthread_t a[4];
    for (int i = 0; i < 4; i++)
      pthread_create(&a[i], NULL, adopter, (void *)(uintptr_t)i);
    for (int i = 0; i < 4; i++)
      pthread_join(a[i], NULL);
    freed_orphans += orphans_n;
    orphans_n = 0;
  }
  uint64_t left = 0;
  for (int i = 0; i < MAILBOX; i++) {
    cookie_t *c = atomic_exchange(&mailbox[i], NULL);
    if (c) {
      check(c);
      FREE(c);
      left++;
    }
  }
  FREE(orphans);
  FREE(t);
  printf("ok threads=%d waves=%d made=%llu verified=%llu handed=%llu "
         "orphans=%llu mailbox=%llu\n",
         threads, waves, (unsigned long long)made, (unsigned long long)verified,
         (unsigned long long)handed, (unsigned long long)freed_orphans,
         (unsigned long long)left);
  return 0;
}
