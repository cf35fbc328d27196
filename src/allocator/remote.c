/* Frees of other heaps' blocks: the freeing thread's per-class cache of them, sent
 * home when full; per-destination batches pushed with one compare-and-swap onto the
 * owner heap's remote queue; and the owner draining its queue. The links of batches
 * and queues are xor'd with hsm_remote_key (0 unless HSMALLOC_SECURE=1; the cache is
 * not used then, its lists go onto the queues as they are linked). */
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
  s->head = s->tail = NULL;
  s->count = 0;
  s->bytes = 0;
}

void hsm_rbatch_flush_all(hsm_heap_t *heap) {
  for (int i = 0; i < HSM_RBATCH_SLOTS; i++)
    if (heap->rbatch[i].count) rbatch_flush(heap, &heap->rbatch[i]);
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
  hsm_rbatch_t *s = &self->rbatch[dest->id & (HSM_RBATCH_SLOTS - 1)];
  if (s->dest != dest) {
    if (s->count) rbatch_flush(self, s);
    s->dest = dest;
  }
  b->next = rlink(s->head);
  s->head = b;
  if (s->tail == NULL) s->tail = b;
  s->count++;
  s->bytes += pg->block_size;
  if (s->count >= HSM_RBATCH_BLOCKS || s->bytes >= HSM_RBATCH_BYTES) rbatch_flush(self, s);
}

/* A block of another heap freed by a thread with a heap stays with this thread, on
 * its class's cache (pushed by hsm_free), which the allocation path uses before its
 * own pages: objects handed between live threads then cost no cache-line trip back
 * to their owner. Past the class's limit the cache is sent home in batches. */
static hsm_heap_t *owner_of(hsm_block_t *b) { return hsm_page_of(hsm_segment_of(b), b)->heap; }

/* The pushes a class's cache takes before it is sent home (cache_left counts them
 * down to 0 from what this gives; hsm_cache_limit[cls] is the whole budget). A thread
 * that took none of its cached blocks since they were last sent home frees the class's
 * blocks for others without
 * allocating it (a consumer): held here they are of no use, and their owner carves
 * fresh memory meanwhile. So a cache starts with a quarter of the budget (at least
 * HSM_CACHE_MIN_BLOCKS blocks: one push each), and gets the whole budget once the
 * thread allocates the class: from the cache (hsm_cache_overflow), or when it finds
 * the cache empty (hsm_page_alloc_slow). */
static uint32_t cache_start(size_t cls) {
  uint32_t limit = hsm_cache_limit[cls], batch = limit / 4;
  /* a hot slot's class has no size yet (its limit is 0) when a heap is made before a
   * heap takes the slot: a budget of 0 would count down past 0 and never send the cache
   * home; 1 sends its first block home, and the flush reads the budget then */
  if (limit == 0) return 1;
  if (batch < HSM_CACHE_MIN_BLOCKS) batch = HSM_CACHE_MIN_BLOCKS;
  return batch < limit ? batch : limit;
}

void hsm_cache_init(hsm_heap_t *heap) {
  for (size_t cls = 0; cls < HSM_CLASSES; cls++) heap->cache_left[cls] = cache_start(cls);
}

/* The cache list is already linked. While it holds one heap's blocks only, its owner is
 * cache->heap and its first block (the bottom of the list) cache->local_free, so the
 * whole list goes home with one compare-and-swap, no block touched (free.c's free_other
 * and free_to_empty_cache keep them; a block of another heap clears the tail). Else
 * each run of blocks with the same owner is pushed as it stands, one compare-and-swap
 * per run, the owner looked up where the page changes: a block whose free mark is its
 * predecessor's (the page: the cache holds no secure page's blocks) lies on the same
 * page. direct stays on the empty cache: a thread that frees the class for others
 * saves setting it back on its next free, and one that allocates the class finds it
 * empty on the slow path, which gives the cache its whole budget and direct a page. */
static void cache_flush(hsm_heap_t *self, size_t cls) {
  hsm_page_t *cache = &self->cache[cls];
  hsm_block_t *b = cache->free, *one_owner_tail = cache->local_free;
  cache->free = NULL;
  cache->used = 0; /* allocations from the cache, counted by their pops */
  self->cache_left[cls] = cache_start(cls);
  while (b != NULL) {
    hsm_heap_t *dest;
    hsm_block_t *tail, *next;
    if (one_owner_tail != NULL) {
      dest = cache->heap;
      tail = one_owner_tail;
      next = NULL;
    } else {
      dest = owner_of(b);
      tail = b;
      uintptr_t mark = b->mark;
      while ((next = tail->next) != NULL) {
        if (HSM_UNLIKELY(next->mark != mark)) {
          if (owner_of(next) != dest) break;
          mark = next->mark;
        }
        tail = next;
      }
    }
    hsm_block_t *old = atomic_load_explicit(&dest->remote, memory_order_relaxed);
    do {
      tail->next = old;
    } while (!atomic_compare_exchange_weak_explicit(&dest->remote, &old, b, memory_order_release,
                                                    memory_order_relaxed));
    HSM_COUNT(self->stats.remote_pushes, 1);
    b = next;
  }
}

void hsm_cache_overflow(hsm_heap_t *self, size_t cls) {
  uint32_t reused = self->cache[cls].used;
  cache_flush(self, cls);
  if (reused) self->cache_left[cls] = hsm_cache_limit[cls];
}

void hsm_cache_flush_all(hsm_heap_t *heap) {
  for (size_t cls = 0; cls < HSM_CLASSES; cls++)
    if (heap->cache[cls].free != NULL) cache_flush(heap, cls);
}

/* Secure mode: a block from the queue must be a freed block of one of this heap's
 * pages; anything else means a link was overwritten in transit. */
static void drained_check(hsm_heap_t *heap, hsm_block_t *b) {
  hsm_page_t *pg =
      hsm_registry_kind(b) == HSM_REG_SEGMENT ? hsm_page_of(hsm_segment_of(b), b) : NULL;
  if (pg == NULL || !pg->in_use || pg->heap != heap || b->mark != hsm_mark(pg) ||
      (!pg->flags.f.is_large && !pg->flags.f.has_aligned && !hsm_block_ok(pg, b, pg->limit)))
    hsm_fatal("free", b,
              "a block in the queue of other threads' frees was overwritten (a write after "
              "free)");
}

/* A run of blocks of one page, linked as they came: onto the page's second list in one
 * step, and the page's count of blocks out down by the run's length (a parked full
 * page goes back to its queue, an empty one may go back to its segment). */
static void splice_run(hsm_heap_t *heap, hsm_page_t *pg, hsm_block_t *head, hsm_block_t *tail,
                       uint32_t n) {
  tail->next = pg->local_free; /* the page's key is 0: not a secure page */
  pg->local_free = head;
  pg->used -= n;
  if ((int32_t)pg->used <= 0) hsm_page_after_free(heap, pg);
}

/* Secure mode: each block checked, and relinked with its page's key. */
static uint64_t drain_checked(hsm_heap_t *heap, hsm_block_t *b, uint64_t *bytes) {
  uint64_t n = 0;
  uintptr_t key = hsm_remote_key;
  while (b != NULL) {
    drained_check(heap, b);
    hsm_page_t *pg = hsm_page_of(hsm_segment_of(b), b);
    hsm_block_t *next = (hsm_block_t *)((uintptr_t)b->next ^ key);
    *bytes += pg->block_size; /* before the free: a large page may go back */
    hsm_page_free_block(heap, pg, b);
    b = next;
    n++;
  }
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
      splice_run(heap, pg, head, tail, run);
    }
  }
  HSM_COUNT(heap->stats.drains, 1);
  HSM_COUNT(heap->stats.drained, n);
  HSM_COUNT(heap->stats.drained_bytes, bytes);
}
