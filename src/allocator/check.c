/* Hardening: the one-line fatal messages of free's checks, and HSMALLOC_SECURE=1
 * (random page keys for the encoded free lists, fresh blocks in random order, a guard
 * page at the end of every segment). The checks themselves sit in the paths they
 * guard (free.c, page.c, remote.c); what they cost is in BENCHMARKS.md. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

int hsm_secure;
uintptr_t hsm_remote_key;

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t seed_value(void) {
  uint64_t s = 0;
  if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)&s;
  }
  return s;
}

/* Read once, before the first heap exists (inside the process's first malloc): the
 * lists' encoding cannot change afterwards. */
void hsm_check_init(void) {
  const char *v = getenv("HSMALLOC_SECURE");
  hsm_secure = v != NULL && *v != '\0' && *v != '0';
  if (hsm_secure) {
    uint64_t s = seed_value();
    hsm_remote_key = (uintptr_t)splitmix(&s) | 1u;
    hsm_mark_key = (uintptr_t)splitmix(&s) | 1u;
    hsm_tail_key = splitmix(&s);
  }
}

uint64_t hsm_random(hsm_heap_t *heap) {
  if (heap->rng == 0) heap->rng = seed_value() | 1u;
  return splitmix(&heap->rng);
}

/* "hsmalloc: FN(0x...): WHAT; aborting" on stderr, then abort(): formatted by hand,
 * with no allocation, since the heap may be damaged. */
void hsm_fatal(const char *fn, const void *p, const char *what) {
  char line[320];
  size_t n = 0;
  const char *parts[] = {"hsmalloc: ", fn, "(0x"};
  for (int k = 0; k < 3; k++)
    for (const char *c = parts[k]; *c; c++) line[n++] = *c;
  uintptr_t v = (uintptr_t)p;
  int shift = 60;
  while (shift > 0 && ((v >> shift) & 15u) == 0) shift -= 4;
  for (; shift >= 0; shift -= 4) line[n++] = "0123456789abcdef"[(v >> shift) & 15u];
  line[n++] = ')';
  line[n++] = ':';
  line[n++] = ' ';
  while (*what && n < sizeof line - 16) line[n++] = *what++;
  for (const char *c = "; aborting\n"; *c; c++) line[n++] = *c;
  ssize_t w = write(2, line, n);
  (void)w;
  abort();
}

void hsm_bad_free(const char *fn, const void *p) {
  hsm_fatal(fn, p,
            "not a block hsmalloc handed out (an interior, unaligned or stray pointer, or a "
            "block freed already)");
}

void hsm_double_free(const char *fn, const void *p) {
  hsm_fatal(fn, p, "double free (the block is free already)");
}

/* ---- secure mode ---- */

/* A secure page: its links encoded with the link key, every free into it through the
 * slow path (its bound on the first line stays 0: page_extend). */
void hsm_secure_page_init(hsm_heap_t *heap, hsm_page_t *pg) {
  (void)heap;
  pg->key = hsm_remote_key;
  pg->flags.f.secure = 1;
}

/* Link n fresh blocks from `first` in a random order (an inside-out Fisher-Yates over
 * their indexes, at most HSM_EXTEND_BYTES / 16 of them), each marked free; returns the
 * head. Index i's partner is a 32-bit draw times i + 1, its top 32 bits (Lemire's
 * multiply-shift: no division, a bias below 2^-24 for at most 256 blocks), two draws
 * from each 64-bit one: a division per block cost more than the rest of the carving. */
hsm_block_t *hsm_secure_link_run(hsm_page_t *pg, uint8_t *first, size_t n) {
  uint16_t order[HSM_EXTEND_BYTES / 16];
  hsm_heap_t *heap = pg->heap;
  (void)hsm_random(heap); /* seeded; the state then kept in a register */
  uint64_t state = heap->rng, r = 0;
  for (size_t i = 0; i < n; i++) {
    r = (i & 1) ? r >> 32 : splitmix(&state);
    size_t j = (size_t)(((r & 0xffffffffu) * (uint64_t)(i + 1)) >> 32);
    order[i] = order[j];
    order[j] = (uint16_t)i;
  }
  heap->rng = state;
  hsm_block_t *next = NULL;
  for (size_t i = 0; i < n; i++) {
    hsm_block_t *b = (hsm_block_t *)(first + (size_t)order[i] * pg->block_size);
    b->next = hsm_link(pg, next);
    b->mark = hsm_secure_mark(b);
    next = b;
  }
  return next;
}

/* Secure mode keeps the last slice of every segment out of use, its last 4 KiB page
 * without access: a run off the end of a segment faults before it reaches whatever is
 * mapped next (another segment's header). */
uint32_t hsm_segment_free_all(void) {
  return hsm_secure ? HSM_SLICES_FREE_ALL & ~(1u << (HSM_SLICES - 1)) : HSM_SLICES_FREE_ALL;
}

void hsm_segment_guard(void *seg) {
  if (hsm_secure) mprotect((uint8_t *)seg + HSM_SEGMENT_SIZE - 4096, 4096, PROT_NONE);
}
