/* check.h — a part of internal.h, included there at its place (it uses the types
 * declared before it): the hardening of check.c, free.c and page.c. */
#ifndef HSM_CHECK_H
#define HSM_CHECK_H

/* ---- hardening (check.c) ----
 * Default mode: free checks that a pointer is a block start below the page's carved
 * blocks (interior, unaligned and never-returned pointers) and that the block's free
 * mark is not set (double free); each failure is one line on stderr and abort().
 * HSMALLOC_SECURE=1 adds encoded free lists, checked on every allocation, guard pages
 * at the end of every segment, and fresh blocks handed out in random order; every
 * malloc and free then takes the checked (generic) path. */
HSM_HIDDEN extern int hsm_secure;
/* secure mode: the links of every free list (caches, pages, batches, queues) are xor'd
 * with hsm_remote_key, a free block's mark is its address xor hsm_mark_key, the request
 * behind a small block is encoded with hsm_tail_key (secure.c); all 0 otherwise */
HSM_HIDDEN extern uintptr_t hsm_remote_key, hsm_mark_key;
/* Secure mode's mark of a free block: its address xor the process's key. */
static inline uintptr_t hsm_secure_mark(const void *b) { return (uintptr_t)b ^ hsm_mark_key; }
HSM_HIDDEN extern uint64_t hsm_tail_key;
HSM_HIDDEN void hsm_check_init(void);
HSM_HIDDEN __attribute__((noreturn, cold)) void hsm_fatal(const char *fn, const void *p,
                                                          const char *what);
HSM_HIDDEN __attribute__((noreturn, cold)) void hsm_bad_free(const char *fn, const void *p);
HSM_HIDDEN __attribute__((noreturn, cold)) void hsm_double_free(const char *fn, const void *p);
HSM_HIDDEN uint64_t hsm_random(hsm_heap_t *heap);
HSM_HIDDEN void hsm_secure_page_init(hsm_heap_t *heap, hsm_page_t *pg);
HSM_HIDDEN hsm_block_t *hsm_secure_link_run(hsm_page_t *pg, uint8_t *first, size_t n);
HSM_HIDDEN __attribute__((noinline, cold, noreturn)) void hsm_written_after_free(const void *b);
/* Secure mode's check of a block about to leave a free list: a block of one of our
 * segments, still marked free (else a write after free changed a link or a mark). The
 * address is masked into the registry, as free's fast path does, not compared with its
 * bound (two instructions fewer at every secure malloc): a forged link decodes to a
 * random address, which lies above user space but for 1 in 2^17; masked, it lands on a
 * segment's unit for a few in 2^26 of those, and then its mark's read faults before
 * anything is written. */
static inline __attribute__((always_inline)) void hsm_secure_check_inline(const hsm_block_t *b) {
  uintptr_t unit = ((uintptr_t)b >> HSM_SEGMENT_SHIFT) & (HSM_REGISTRY_SIZE - 1);
  if (HSM_UNLIKELY(!hsm_byte_eq(hsm_registry, unit, HSM_REG_SEGMENT) ||
                   b->mark != hsm_secure_mark(b)))
    hsm_written_after_free(b);
}
HSM_HIDDEN void hsm_secure_check_free(const hsm_block_t *b);
/* Secure mode's runs of a page's blocks (a cache's flush, the queue of other threads'
 * frees): the bound of pg's carved blocks, 0 for a large page or one with aligned
 * blocks (runs of one); and whether b, the next block of the list, continues the run:
 * a carved block start of pg (one multiplication), marked free. A block that does not
 * goes through the full check, which tells a forged link from another page's block. */
static inline uint64_t hsm_secure_run_limit(const hsm_page_t *pg) {
  return (__atomic_load_n(&pg->flags.f.is_large, __ATOMIC_RELAXED) ||
          __atomic_load_n(&pg->flags.f.has_aligned, __ATOMIC_RELAXED))
             ? 0
             : __atomic_load_n(&pg->limit, __ATOMIC_RELAXED);
}
/* secure.c: the last word of a small block b for a request of n; the canary after the
 * request is this word again (a keyed value: a byte of it is guessed at 1 in 256 as a
 * multiplied one was, and the multiplication cost two instructions at every malloc and
 * free) */
static inline uint64_t hsm_tail_word(const void *b, size_t n) {
  return (uint64_t)n ^ (uint64_t)(uintptr_t)b ^ hsm_tail_key;
}
HSM_HIDDEN __attribute__((noinline, cold, noreturn)) void hsm_overflow(const char *fn,
                                                                       const void *p, uint64_t n,
                                                                       int size_lost);
/* the low k bytes of a word set, for a gap of k = 0..8 bytes (a load: the shifts that
 * make it cost four instructions more) */
HSM_HIDDEN extern const uint64_t hsm_gap_mask[9];
static inline __attribute__((always_inline)) void hsm_seal_inline(void *b, size_t bs, size_t n) {
  uint64_t tw = hsm_tail_word(b, n);
  memcpy((uint8_t *)b + n, &tw, 8); /* the canary */
  memcpy((uint8_t *)b + bs - 8, &tw, 8);
}
/* The gap's bytes between the request and the last word (at most 8) against the
 * canary's: the rest of w is the last word itself, intact since n decoded. Masked, not
 * branched on the gap (random sizes mispredicted it at one free in three). */
static inline __attribute__((always_inline)) int hsm_gap_ok(uint64_t w, uint64_t tw, uint64_t n,
                                                            size_t bs) {
  uint64_t s = bs - 8 - n;
  return ((w ^ tw) & hsm_gap_mask[s < 8 ? s : 8]) == 0;
}
static inline __attribute__((always_inline)) size_t hsm_unseal_inline(const char *fn, const void *p,
                                                                      const void *b, size_t bs) {
  uint64_t tw, w;
  memcpy(&tw, (const uint8_t *)b + bs - 8, 8);
  uint64_t n = tw ^ (uint64_t)(uintptr_t)b ^ hsm_tail_key;
  if (HSM_UNLIKELY(n > bs - 8)) hsm_overflow(fn, p, 0, 1);
  memcpy(&w, (const uint8_t *)b + n, 8);
  if (HSM_UNLIKELY(!hsm_gap_ok(w, tw, n, bs))) hsm_overflow(fn, p, n, 0);
  return (size_t)n;
}
/* Whether small block b's canary is intact (hsm_unseal_inline's checks, without the
 * message: free's caller sends a failure to the generic path, which says it) */
static inline __attribute__((always_inline)) int hsm_canary_ok(const void *b, size_t bs) {
  uint64_t tw, w;
  memcpy(&tw, (const uint8_t *)b + bs - 8, 8);
  uint64_t n = tw ^ (uint64_t)(uintptr_t)b ^ hsm_tail_key;
  if (HSM_UNLIKELY(n > bs - 8)) return 0;
  memcpy(&w, (const uint8_t *)b + n, 8);
  return hsm_gap_ok(w, tw, n, bs);
}
/* secure.c: the canary behind the request n of a small block b of size bs (written, and
 * checked: returns n, or says what was overwritten and aborts), and of a big one (n
 * kept in its metadata) */
HSM_HIDDEN void hsm_secure_seal(void *b, size_t bs, size_t n);
HSM_HIDDEN size_t hsm_secure_unseal(const char *fn, const void *p, const void *b, size_t bs);
HSM_HIDDEN void hsm_secure_seal_big(void *b, size_t n);
HSM_HIDDEN void hsm_secure_unseal_big(const char *fn, const void *p, const void *b, size_t n);
HSM_HIDDEN void *hsm_secure_alloc(hsm_heap_t *heap, size_t csize, size_t size, int zero);
HSM_HIDDEN void *hsm_secure_resize(void *p, size_t size);
HSM_HIDDEN size_t hsm_secure_usable(const void *p, unsigned kind);
HSM_HIDDEN uint32_t hsm_segment_free_all(void);
HSM_HIDDEN void hsm_segment_guard(void *seg);

/* Whether p (in one of pg's slices) is the start of one of small page pg's first
 * blocks: one multiplication, one subtraction and one compare, with the carved
 * count folded into the bound.
 *   With d the block size and M = floor(2^64 / d) + 1, d * M = 2^64 + e where the step
 * e = d - 2^64 mod d is in [1, d] (d for a power of two). For n = p - start = k * d + r
 * (n < 2 MiB), n * M = k * e + r * M modulo 2^64: k * e (below 2^21) when r is 0, and at
 * least M (at least 2^47) otherwise. So (p * M - start * M) mod 2^64 < capacity * e
 * exactly when p is the start of block k < capacity; p below start wraps to above the
 * bound too. (After Lemire, Kaser and Kurz, "Faster remainder by direct computation".) */
static inline __attribute__((always_inline)) uint64_t hsm_block_index(const hsm_page_t *pg,
                                                                      const void *p) {
  return (uint64_t)((uintptr_t)p * pg->div_magic - pg->start_magic);
}
static inline __attribute__((always_inline)) int hsm_block_ok(const hsm_page_t *pg, const void *p,
                                                              uint64_t limit) {
  return hsm_block_index(pg, p) < limit;
}
/* secure mode: whether b continues a run of pg's blocks (hsm_secure_run_limit) */
static inline __attribute__((always_inline)) int hsm_secure_same_page(const hsm_page_t *pg,
                                                                      const hsm_block_t *b,
                                                                      uint64_t limit) {
  return hsm_block_ok(pg, b, limit) && b->mark == hsm_secure_mark(b);
}
/* hsm_block_ok with free's fast path's bound, off the page's first line: 0 when the page
 * is not in use, is a large or a secure-mode page (their frees take the slow path). (A
 * block handed out was carved before, and whatever passed it to the freeing thread made
 * the store visible.) Compared in memory: an atomic load would be an instruction of its
 * own; on x86-64 this is the same single read. */
/* v: hsm_block_index(pg, p), which the slow path reuses (secure mode's check) */
static inline __attribute__((always_inline)) int hsm_block_ok_free(const hsm_page_t *pg,
                                                                   uint64_t v) {
#if defined(__x86_64__)
  int below;
  __asm__("cmpq %2, %1" : "=@ccb"(below) : "r"(v), "m"(pg->free_limit));
  return below;
#else
  return v < __atomic_load_n(&pg->free_limit, __ATOMIC_RELAXED);
#endif
}
static inline uint64_t hsm_block_step(const hsm_page_t *pg) {
  return (uint64_t)pg->block_size * pg->div_magic; /* e, modulo 2^64 */
}
/* blocks carved so far (a small page's: limit is a multiple of the step) */
static inline uint32_t hsm_page_capacity(const hsm_page_t *pg) {
  uint64_t step = hsm_block_step(pg);
  return step ? (uint32_t)(pg->limit / step) : 0;
}
static inline uint64_t hsm_div_magic(size_t block_size) {
  return UINT64_MAX / block_size + 1 + ((block_size & (block_size - 1)) == 0);
}
/* The carved blocks' bound, as another thread may read it. */
static inline uint64_t hsm_carved_limit(const hsm_page_t *pg) {
  return __atomic_load_n(&pg->limit, __ATOMIC_RELAXED);
}
/* The free mark of block b of page pg: the page's address (the default mode: a cache's
 * flush finds the page there), or the block's address xor hsm_mark_key (secure mode);
 * and the encoding of pg's list links. */
static inline uintptr_t hsm_block_mark(const hsm_page_t *pg, const void *b) {
  return HSM_UNLIKELY(hsm_secure) ? hsm_secure_mark(b) : (uintptr_t)pg;
}
static inline hsm_block_t *hsm_link(const hsm_page_t *pg, const hsm_block_t *next) {
  return (hsm_block_t *)((uintptr_t)next ^ pg->key);
}

#endif
