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
HSM_HIDDEN extern uintptr_t hsm_remote_key; /* links of remote batches and queues */
HSM_HIDDEN void hsm_check_init(void);
HSM_HIDDEN __attribute__((noreturn, cold)) void hsm_fatal(const char *fn, const void *p,
                                                          const char *what);
HSM_HIDDEN __attribute__((noreturn, cold)) void hsm_bad_free(const char *fn, const void *p);
HSM_HIDDEN __attribute__((noreturn, cold)) void hsm_double_free(const char *fn, const void *p);
HSM_HIDDEN uint64_t hsm_random(hsm_heap_t *heap);
HSM_HIDDEN void hsm_secure_page_init(hsm_heap_t *heap, hsm_page_t *pg);
HSM_HIDDEN hsm_block_t *hsm_secure_link_run(hsm_page_t *pg, uint8_t *first, size_t n);
HSM_HIDDEN void hsm_secure_pop_check(const hsm_page_t *pg, const hsm_block_t *b);
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
static inline __attribute__((always_inline)) int hsm_block_ok(const hsm_page_t *pg, const void *p,
                                                              uint64_t limit) {
  return (uint64_t)((uintptr_t)p * pg->div_magic - pg->start_magic) < limit;
}
/* hsm_block_ok with free's fast path's bound, off the page's first line: 0 when the page
 * is not in use, is a large or a secure-mode page (their frees take the slow path). (A
 * block handed out was carved before, and whatever passed it to the freeing thread made
 * the store visible.) Compared in memory: an atomic load would be an instruction of its
 * own; on x86-64 this is the same single read. */
static inline __attribute__((always_inline)) int hsm_block_ok_free(const hsm_page_t *pg,
                                                                   const void *p) {
  uint64_t v = (uint64_t)((uintptr_t)p * pg->div_magic - pg->start_magic);
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
/* The free mark of pg's blocks, and the encoding of pg's list links. */
static inline uintptr_t hsm_mark(const hsm_page_t *pg) { return (uintptr_t)pg ^ pg->key; }
static inline hsm_block_t *hsm_link(const hsm_page_t *pg, const hsm_block_t *next) {
  return (hsm_block_t *)((uintptr_t)next ^ pg->key);
}

#endif
