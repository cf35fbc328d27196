/* Secure mode's allocation and free (HSMALLOC_SECURE=1): the default mode's thread cache,
 * with every link of a free list encoded (xor hsm_remote_key, the one link key of secure
 * mode: caches, pages' lists, batches and queues), a free block's mark its own address
 * xor hsm_mark_key (so a check needs no page), every block checked as it is handed out,
 * and a canary behind every request, checked at free and realloc.
 *
 * The canary. A block is 8 bytes longer than the request n (its class is that of n + 8,
 * 16-byte aligned as malloc's are). A small block's last word holds n encoded with the
 * block's address and hsm_tail_key; the 8 bytes after the request hold a canary, that
 * word again (where fewer than 8 bytes lie between the request and the last word,
 * the last word's own bytes continue it). free decodes n (a value past the block means
 * the last word was overwritten) and compares the 8 bytes after it: a write past the
 * request aborts with one line naming the block. A large block keeps n in its page, a
 * huge one in its header, with the canary after the request. malloc_usable_size is n. */
#include <string.h>

#include "internal.h"

uintptr_t hsm_mark_key;
const uint64_t hsm_gap_mask[9] = {0,
                                  0xff,
                                  0xffff,
                                  0xffffff,
                                  0xffffffffull,
                                  0xffffffffffull,
                                  0xffffffffffffull,
                                  0xffffffffffffffull,
                                  ~0ull};
uint64_t hsm_tail_key;

void hsm_overflow(const char *fn, const void *p, uint64_t n, int size_lost) {
  char what[160], digits[24];
  size_t k = 0, d = 0;
  const char *head =
      size_lost ? "heap overflow: the word after the block's request was overwritten (its size "
                  "is lost)"
                : "heap overflow: the bytes after the ";
  while (*head && k < sizeof what - 1) what[k++] = *head++;
  if (!size_lost) {
    do digits[d++] = (char)('0' + n % 10);
    while ((n /= 10) != 0 && d < sizeof digits);
    while (d > 0 && k < sizeof what - 1) what[k++] = digits[--d];
    for (const char *t = "-byte request were overwritten"; *t && k < sizeof what - 1; t++)
      what[k++] = *t;
  }
  what[k] = '\0';
  hsm_fatal(fn, p, what);
}

void hsm_secure_seal(void *b, size_t bs, size_t n) { hsm_seal_inline(b, bs, n); }

size_t hsm_secure_unseal(const char *fn, const void *p, const void *b, size_t bs) {
  return hsm_unseal_inline(fn, p, b, bs);
}

/* A large or huge block's canary: 8 bytes after the request n (kept in its metadata). */
void hsm_secure_seal_big(void *b, size_t n) {
  uint64_t c = hsm_tail_word(b, n);
  memcpy((uint8_t *)b + n, &c, 8);
}

void hsm_secure_unseal_big(const char *fn, const void *p, const void *b, size_t n) {
  uint64_t w;
  memcpy(&w, (const uint8_t *)b + n, 8);
  if (HSM_UNLIKELY(w != hsm_tail_word(b, n))) hsm_overflow(fn, p, n, 0);
}

void hsm_written_after_free(const void *b) {
  hsm_fatal("malloc", b,
            "this free block was written after it was freed (its list link or free mark "
            "changed)");
}

void hsm_secure_check_free(const hsm_block_t *b) { hsm_secure_check_inline(b); }

/* The class's cache's first block, checked, popped and sealed for a request of n; the
 * cache is filled first when empty. */
static void *small_alloc(hsm_heap_t *heap, size_t cls, size_t n, int zero) {
  hsm_page_t *cache = &heap->cache[cls];
  if (cache->free == NULL && !hsm_page_fill_cache(heap, cls)) return NULL;
  hsm_block_t *b = cache->free;
  hsm_secure_check_free(b);
  cache->free = (hsm_block_t *)((uintptr_t)b->next ^ hsm_remote_key);
  b->mark = 0;
  cache->used++;
  HSM_COUNT(heap->stats.allocs[cls], 1);
  HSM_COUNT(heap->stats.requested[cls], n);
  if (zero) memset(b, 0, n);
  hsm_secure_seal(b, hsm_class_size[cls], n);
  return b;
}

/* A block for a request of n bytes: 8 more (the canary), rounded to 16: no packed
 * (8-byte aligned) class serves secure mode. (n <= SIZE_MAX - 32.) */
static size_t block_need(size_t n) { return (n + 8 + 15) & ~(size_t)15; }

void *hsm_secure_alloc(hsm_heap_t *heap, size_t csize, size_t size, int zero) {
  if (HSM_UNLIKELY(csize > SIZE_MAX - 32)) return NULL;
  size_t need = block_need(csize);
  size_t cls;
  if (need <= HSM_SMALL_MAX) {
    cls = hsm_heap_class_of(heap, need);
  } else if (heap->hot_big_n == 0 || (cls = hsm_hot_big_class(heap, need)) == 0) {
    if (need <= HSM_LARGE_MAX) {
      hsm_block_t *b = hsm_large_alloc(heap, need, zero);
      if (b == NULL) return NULL;
      b->mark = 0;
      hsm_page_t *pg = hsm_page_of(hsm_segment_of(b), b);
      pg->large_request = (uint32_t)size;
      hsm_secure_seal_big(b, size);
      return b;
    }
    size_t dirty;
    void *p = hsm_huge_alloc(need, 0, &dirty);
    if (p == NULL) return NULL;
    if (zero && dirty) memset(p, 0, dirty < size ? dirty : size);
    hsm_huge_t *h = hsm_huge_of(p, HSM_REG_HUGE);
    h->requested = size;
    hsm_secure_seal_big(p, size);
    HSM_COUNT(heap->stats.allocs[HSM_BIN_HUGE], 1);
    HSM_COUNT(heap->stats.alloc_bytes[HSM_BIN_HUGE], h->usable);
    HSM_COUNT(heap->stats.requested[HSM_BIN_HUGE], size);
    return p;
  }
  return small_alloc(heap, cls, size, zero);
}

/* A huge block p (its canary checked already) resized to `size` as the default mode's
 * are (huge.c: its pages moved by mremap when it grows, its tail unmapped when it
 * shrinks below half), with room for the canary, sealed again after the new request.
 * Returns the block, or NULL (it moves: it would no longer be huge, or mremap failed). */
static void *huge_resize(void *p, size_t size) {
  size_t need = block_need(size);
  if (need <= HSM_LARGE_MAX) return NULL;
  hsm_huge_t *h = hsm_huge_of(p, HSM_REG_HUGE);
  void *q = p;
  if (need > h->usable) {
    if ((q = hsm_huge_grow(p, need)) == NULL) return NULL;
    h = hsm_huge_of(q, HSM_REG_HUGE);
  } else if (need < h->usable / 2 && !hsm_huge_shrink(p, need)) {
    return NULL;
  }
  h->requested = size;
  hsm_secure_seal_big(q, size);
  return q;
}

/* realloc of p (checked already) to `size` in place, sealed for the new request: a
 * small block's start whose capacity (its size less the last word) holds it and is used
 * at least half; a large block resized as the default mode's are (8 bytes more); a huge
 * one (huge_resize). Returns p or where its pages moved, or NULL (it moves). */
void *hsm_secure_resize(void *p, size_t size) {
  if (size > SIZE_MAX - 32) return NULL;
  unsigned kind = hsm_registry_kind(p);
  if (kind == HSM_REG_HUGE) return huge_resize(p, size);
  if (kind != HSM_REG_SEGMENT) return NULL;
  hsm_page_t *pg = hsm_page_of(hsm_segment_of(p), p);
  if (__atomic_load_n(&pg->flags.f.has_aligned, __ATOMIC_RELAXED)) return NULL;
  if (__atomic_load_n(&pg->flags.f.is_large, __ATOMIC_RELAXED)) {
    if (size + 8 <= HSM_SMALL_MAX || size + 8 > HSM_LARGE_MAX) return NULL;
    void *q = hsm_large_resize(p, size + 8);
    if (q == NULL) return NULL;
    hsm_page_of(hsm_segment_of(q), q)->large_request = (uint32_t)size;
    hsm_secure_seal_big(q, size);
    return q;
  }
  size_t cap = pg->block_size - 8;
  if (size > cap || size < cap / 2) return NULL;
  hsm_secure_seal(p, pg->block_size, size);
  return p;
}

/* malloc_usable_size of p, a block of ours in secure mode: what is left of its request
 * from p (the canary checked on the way). */
size_t hsm_secure_usable(const void *p, unsigned kind) {
  if (kind != HSM_REG_SEGMENT) {
    hsm_huge_t *h = hsm_huge_of(p, kind);
    return (size_t)(h->block + h->requested - (const uint8_t *)p);
  }
  hsm_page_t *pg = hsm_page_of(hsm_segment_of(p), p);
  const uint8_t *b = (const uint8_t *)hsm_block_start(pg, p);
  size_t n = pg->flags.f.is_large ? pg->large_request
                                  : hsm_secure_unseal("malloc_usable_size", p, b, pg->block_size);
  return (size_t)(b + n - (const uint8_t *)p);
}
