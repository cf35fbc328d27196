/* Frees of other heaps' blocks: per-destination batches (the runs a thread's cache
 * sends home, large blocks, secure mode's frees) pushed with one compare-and-swap onto
 * the owner heap's remote queue; and the owner draining its queue. The links of
 * batches and queues are xor'd with hsm_remote_key (0 unless HSMALLOC_SECURE=1, which
 * sends its blocks here one at a time, without the caches). */
#include "internal.h"

static inline hsm_block_t *rlink(hsm_block_t *next) {
  return (hsm_block_t *)((uintptr_t)next ^ hsm_remote_key);
}

static void rbatch_flush(hsm_heap_t *self, hsm_rbatch_t *s) {
  hsm_heap_t *dest = s->dest;
  hsm_block_t *old = atomic_load_explicit(&dest->remote, memory_order_relaxed);
  do {
    s->tail->next = rlink(old);
  } while (!atomic_compare_exchange_weak_explicit(&dest->remote, &old, s->head,
                                                  memory_order_release, memory_order_relaxed));
  HSM_COUNT(self->stats.remote_pushes, 1);
  self->rbatch_live &= ~(1u << (s - self->rbatch));
  s->head = s->tail = NULL;
  s->count = 0;
  s->bytes = 0;
}

/* Only the slots holding blocks: a consumer's cache flushes every few dozen frees, and
 * a walk over all the slots cost it more than the push (prodcon: 113 instructions and
 * one mispredicted branch a flush). */
_Static_assert(HSM_RBATCH_SLOTS <= 32, "rbatch_live is one 32-bit mask");
void hsm_rbatch_flush_all(hsm_heap_t *heap) {
  uint32_t live = heap->rbatch_live;
  while (live) {
    rbatch_flush(heap, &heap->rbatch[__builtin_ctz(live)]);
    live &= live - 1;
  }
}

/* The batch of heap dest (a slot by its id; another destination there is pushed first),
 * marked as holding blocks. */
static hsm_rbatch_t *rbatch_for(hsm_heap_t *self, hsm_heap_t *dest) {
  unsigned slot = dest->id & (HSM_RBATCH_SLOTS - 1);
  hsm_rbatch_t *s = &self->rbatch[slot];
  if (s->dest != dest) {
    if (s->count) rbatch_flush(self, s);
    s->dest = dest;
  }
  self->rbatch_live |= 1u << slot;
  return s;
}

/* A cache's run goes into its batch whole (its links are the batch's: encoded with the
 * same key in secure mode). */
void hsm_rbatch_add_run(hsm_heap_t *self, hsm_heap_t *dest, hsm_block_t *head, hsm_block_t *tail,
                        uint32_t n, size_t bytes) {
  hsm_rbatch_t *s = rbatch_for(self, dest);
  tail->next = rlink(s->head);
  s->head = head;
  if (s->tail == NULL) s->tail = tail;
  s->count += n;
  s->bytes += bytes;
  if (s->count >= HSM_RBATCH_BLOCKS || s->bytes >= HSM_RBATCH_BYTES) rbatch_flush(self, s);
}

/* Free a block owned by another heap. A thread with a heap collects such blocks per
 * destination and pushes each batch with one compare-and-swap; a thread without one
 * (exiting) pushes the block alone. */
void hsm_remote_free(hsm_heap_t *self, hsm_page_t *pg, hsm_block_t *b) {
  hsm_heap_t *dest = pg->heap;
  if (self == NULL) {
    hsm_block_t *old = atomic_load_explicit(&dest->remote, memory_order_relaxed);
    do {
      b->next = rlink(old);
    } while (!atomic_compare_exchange_weak_explicit(&dest->remote, &old, b, memory_order_release,
                                                    memory_order_relaxed));
    return;
  }
  hsm_rbatch_t *s = rbatch_for(self, dest);
  b->next = rlink(s->head);
  s->head = b;
  if (s->tail == NULL) s->tail = b;
  s->count++;
  s->bytes += pg->block_size;
  if (s->count >= HSM_RBATCH_BLOCKS || s->bytes >= HSM_RBATCH_BYTES) rbatch_flush(self, s);
}

/* Secure mode: a block from the queue must be a freed block of one of this heap's
 * pages; anything else means a link was overwritten in transit. Returns its page. */
static hsm_page_t *drained_check(hsm_heap_t *heap, hsm_block_t *b) {
  hsm_page_t *pg =
      hsm_registry_kind(b) == HSM_REG_SEGMENT ? hsm_page_of(hsm_segment_of(b), b) : NULL;
  if (pg == NULL || !pg->in_use || pg->heap != heap || b->mark != hsm_block_mark(pg, b) ||
      (!__atomic_load_n(&pg->flags.f.is_large, __ATOMIC_RELAXED) &&
       !__atomic_load_n(&pg->flags.f.has_aligned, __ATOMIC_RELAXED) &&
       !hsm_block_ok(pg, b, pg->limit)))
    hsm_fatal("free", b,
              "a block in the queue of other threads' frees was overwritten (a write after "
              "free)");
  return pg;
}

/* Secure mode's drain fetches the lines of a 4 KiB area of the queue's blocks ahead of
 * its walk. The blocks were written by other threads, so each link the walk follows
 * misses the cache; fresh blocks are handed out in random order within each 4 KiB
 * carved (check.c), so a list of them jumps about its area, where the default mode's
 * ascending or descending lists let the hardware's stream prefetch fetch ahead. Fetched
 * as a whole, an area's lines miss in parallel, not one link at a time. An area is
 * fetched when two blocks in a row lie in it (and it is not the one fetched last): a
 * queue of scattered blocks (larson's: 1.1 blocks an area in a row) would fetch 64
 * lines for each. A prefetch never faults (a forged link is caught by the checks). */
typedef struct {
  uintptr_t last;    /* the area of the block walked before */
  uintptr_t fetched; /* the area fetched last */
  uint64_t count;    /* areas fetched */
} hsm_drain_ahead_t;

static inline __attribute__((always_inline)) void fetch_ahead(hsm_drain_ahead_t *f,
                                                              const hsm_block_t *b) {
  uintptr_t a = (uintptr_t)b & ~(uintptr_t)(HSM_EXTEND_BYTES - 1);
  if (a != f->last) {
    f->last = a;
  } else if (a != f->fetched) {
#pragma GCC unroll 64 /* 64 instructions an area, where the loop took 256 (callgrind) */
    for (uintptr_t l = 0; l < HSM_EXTEND_BYTES; l += 64) __builtin_prefetch((const void *)(a + l));
    f->fetched = a;
    f->count++;
  }
}

/* Secure mode: the queue by runs of a page's blocks, as the default mode's, each block
 * checked: the run's first in full, the next ones as free block starts of the same
 * small page (hsm_secure_same_page; any other goes through the full check). A run's
 * links are its page's already (the one link key). */
static uint64_t drain_checked(hsm_heap_t *heap, hsm_block_t *b, uint64_t *bytes) {
  uint64_t n = 0;
  hsm_drain_ahead_t ahead = {(uintptr_t)b & ~(uintptr_t)(HSM_EXTEND_BYTES - 1), 0, 0};
  while (b != NULL) { /* (each block but the first seen once, by the run's walk) */
    hsm_page_t *pg = drained_check(heap, b);
    uint64_t limit = hsm_secure_run_limit(pg);
    hsm_block_t *head = b, *tail = b;
    uint32_t run = 1;
    while ((b = (hsm_block_t *)((uintptr_t)tail->next ^ hsm_remote_key)) != NULL &&
           (fetch_ahead(&ahead, b), hsm_secure_same_page(pg, b, limit))) {
      tail = b;
      run++;
    }
    n += run;
    *bytes += (uint64_t)run * pg->block_size; /* before the splice: a large page may go back */
    hsm_page_return_run(heap, pg, head, tail, run);
  }
  HSM_COUNT(heap->stats.drain_areas, ahead.count);
  return n;
}

/* The queue is a stack of the batches pushed, each a list of one class's blocks (a
 * cache) or of one destination's (a batch), mostly a page's blocks in a row: such a
 * run is found by the blocks' free marks (the page: its key is 0) and goes back to its
 * page in one step, so a block costs its owner a load and a compare. */
void hsm_heap_drain_remote(hsm_heap_t *heap) {
  hsm_block_t *b = atomic_exchange_explicit(&heap->remote, NULL, memory_order_acquire);
  if (b == NULL) return;
  uint64_t n = 0, bytes = 0;
  if (HSM_UNLIKELY(hsm_secure)) {
    n = drain_checked(heap, b, &bytes);
  } else {
    while (b != NULL) {
      hsm_page_t *pg = hsm_page_of(hsm_segment_of(b), b);
      uintptr_t mark = b->mark;
      hsm_block_t *head = b, *tail = b;
      uint32_t run = 1;
      while ((b = tail->next) != NULL && b->mark == mark) {
        tail = b;
        run++;
      }
      n += run;
      bytes += (uint64_t)run * pg->block_size; /* before the splice: a large page may go back */
      hsm_page_return_run(heap, pg, head, tail, run);
    }
  }
  HSM_COUNT(heap->stats.drains, 1);
  HSM_COUNT(heap->stats.drained, n);
  HSM_COUNT(heap->stats.drained_bytes, bytes);
}
