/* Frees of other heaps' blocks: per-destination batches (the runs a thread's cache
 * sends home, large blocks, secure mode's frees) pushed with one compare-and-swap onto
 * the owner heap's remote queue; and the owner draining its queue. The links of
 * batches and queues are xor'd with hsm_remote_key (0 unless HSMALLOC_SECURE=1, which
 * sends its blocks here one at a time, without the caches). */
#include <string.h>

#include "internal.h"

static inline hsm_block_t *rlink(hsm_block_t *next) {
  return (hsm_block_t *)((uintptr_t)next ^ hsm_remote_key);
}

/* head .. tail (linked) onto dest's queue with one compare-and-swap. */
static void queue_push(hsm_heap_t *dest, hsm_block_t *head, hsm_block_t *tail) {
  hsm_block_t *old = atomic_load_explicit(&dest->remote, memory_order_relaxed);
  do {
    tail->next = rlink(old);
  } while (!atomic_compare_exchange_weak_explicit(&dest->remote, &old, head,
                                                  memory_order_release, memory_order_relaxed));
}

static void rbatch_flush(hsm_heap_t *self, hsm_rbatch_t *s) {
  hsm_heap_t *dest = s->dest;
  queue_push(dest, s->head, s->tail);
  /* on the line the push just wrote; one pusher a threshold looks whether the owner idles */
  uint64_t pushed = atomic_fetch_add_explicit(&dest->pushed, s->bytes, memory_order_relaxed);
  if (HSM_UNLIKELY(pushed + s->bytes >= HSM_IDLE_QUEUE_BYTES) &&
      atomic_exchange_explicit(&dest->pushed, 0, memory_order_relaxed) >= HSM_IDLE_QUEUE_BYTES &&
      !hsm_secure && atomic_load_explicit(&hsm_transfer_on, memory_order_relaxed))
    hsm_heap_take_if_idle(dest);
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
    queue_push(dest, b, b);
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

/* Secure mode: the queue by runs of a page's blocks, as the default mode's, each block
 * checked: the run's first in full, the next ones as free block starts of the same
 * small page (hsm_secure_same_page; any other goes through the full check). A run's
 * links are its page's already (the one link key). */
static uint64_t drain_checked(hsm_heap_t *heap, hsm_block_t *b, uint64_t *bytes) {
  uint64_t n = 0;
  while (b != NULL) {
    hsm_page_t *pg = drained_check(heap, b);
    uint64_t limit = hsm_secure_run_limit(pg);
    hsm_block_t *head = b, *tail = b;
    uint32_t run = 1;
    while ((b = (hsm_block_t *)((uintptr_t)tail->next ^ hsm_remote_key)) != NULL &&
           hsm_secure_same_page(pg, b, limit)) {
      tail = b;
      run++;
    }
    n += run;
    *bytes += (uint64_t)run * pg->block_size; /* before the splice: a large page may go back */
    hsm_page_return_run(heap, pg, head, tail, run);
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
  atomic_store_explicit(&heap->pushed, 0, memory_order_relaxed);
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

/* ---- an idle owner's queue taken by another thread ---- */

typedef struct {
  hsm_block_t *head, *tail;
  uint32_t n;
} block_list_t;

static void list_add_run(block_list_t *l, hsm_block_t *head, hsm_block_t *tail, uint32_t n) {
  tail->next = l->head;
  if (l->head == NULL) l->tail = tail;
  l->head = head;
  l->n += n;
}

/* The class's blocks into the transfer cache, in batches of at most half the cache
 * bound (a taker's empty cache holds a batch whole), while it has room; the rest stay
 * in l. Returns the blocks put. */
static uint32_t list_to_transfer(block_list_t *l, size_t cls) {
  uint32_t most = hsm_cache_limit[cls] / 2, put = 0;
  while (l->n != 0 && most != 0) {
    uint32_t k = l->n < most ? l->n : most;
    hsm_block_t *head = l->head, *tail = head;
    for (uint32_t i = 1; i < k; i++) tail = tail->next;
    hsm_block_t *rest = tail->next;
    tail->next = NULL;
    if (!hsm_transfer_put_list(cls, head, k)) {
      tail->next = rest;
      break;
    }
    l->head = rest;
    l->n -= k;
    put += k;
  }
  return put;
}

/* The queue of owner, a heap whose thread has run no allocation slow path for a while
 * (it sleeps, or waits: heap.c decides), taken whole by the thread of heap self (an
 * exchange, as the owner's drain: each block goes to one of them): its blocks of the
 * fixed classes up to 8 KiB go into the transfer cache, where any thread's empty cache
 * takes them before it touches its pages; the rest (other classes, or no room) are
 * pushed back onto the owner's queue in one step. A block in the queue is as a block
 * of a cache: marked free, counted out of its page, which the owner's pages and lists
 * do not see until a drain, so nothing of the owner's is written. Default mode only
 * (secure mode's queue links are encoded, its blocks checked at the owner's drain).
 * Returns the blocks put into the transfer cache. */
uint32_t hsm_remote_take_idle(hsm_heap_t *owner) {
  hsm_block_t *b = atomic_exchange_explicit(&owner->remote, NULL, memory_order_acquire);
  if (b == NULL) return 0;
  block_list_t by_class[HSM_TRANSFER_CLASSES], back = {NULL, NULL, 0};
  memset(by_class, 0, sizeof by_class);
  while (b != NULL) { /* by runs of a page's blocks, as the owner's drain */
    hsm_page_t *pg = hsm_page_of(hsm_segment_of(b), b);
    uintptr_t mark = b->mark;
    hsm_block_t *head = b, *tail = b;
    uint32_t run = 1;
    while ((b = tail->next) != NULL && b->mark == mark) {
      tail = b;
      run++;
    }
    size_t cls = pg->class_id;
    int small = cls < HSM_TRANSFER_CLASSES &&
                !__atomic_load_n(&pg->flags.f.is_large, __ATOMIC_RELAXED);
    list_add_run(small ? &by_class[cls] : &back, head, tail, run);
  }
  uint32_t put = 0;
  for (size_t cls = 0; cls < HSM_TRANSFER_CLASSES; cls++) {
    block_list_t *l = &by_class[cls];
    if (l->n == 0) continue;
    put += list_to_transfer(l, cls);
    if (l->n != 0) list_add_run(&back, l->head, l->tail, l->n);
  }
  if (back.n != 0) queue_push(owner, back.head, back.tail);
  return put;
}
