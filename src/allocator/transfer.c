/* The transfer cache: per fixed class up to 8 KiB, up to HSM_TRANSFER_SLOTS whole
 * batches of blocks that threads' caches overflowed, taken whole by a thread whose
 * cache of the class is empty before it touches its pages (TCMalloc's transfer cache).
 * A batch is a cache's list as it was (NULL-terminated, its blocks marked free and
 * counted out of their pages, as in a cache) and its length: it moves between threads
 * without a walk, where sending it home cost three (the flush sorting it by page, the
 * owner's drain, the owner's refill). A class holds at most HSM_TRANSFER_BYTES of
 * blocks: their pages cannot be given back while the blocks circulate. Default mode,
 * and once the process has a second heap, only: secure mode's caches go home checked,
 * and a single thread's flush goes to its own pages anyway.
 *
 * One lock per class (a line of its own), only ever tried: a put or a take holds it
 * for a few stores, and one that finds it taken does without. An exited thread's blocks
 * may wait here until another thread takes them or hsmalloc_collect sends them home. */
#include <sched.h>

#include "internal.h"

typedef struct {
  _Alignas(64) atomic_int lock;
  _Atomic uint32_t batches; /* read without the lock to pass an empty class by */
  _Atomic uint32_t blocks;  /* the same: room() is tried before the lock */
  hsm_block_t *head[HSM_TRANSFER_SLOTS];
  uint32_t count[HSM_TRANSFER_SLOTS];
} transfer_t;

HSM_BIG_BSS static transfer_t transfer[HSM_TRANSFER_CLASSES];
_Atomic int hsm_transfer_on; /* set when the process makes its second heap (heap.c) */

/* A put or a take never waits: with the lock taken (by a thread that may have been
 * preempted holding it, on an oversubscribed machine) the batch goes home, or the cache
 * refills from its page, as without the transfer cache. */
static int ttrylock(transfer_t *t) {
  return !atomic_load_explicit(&t->lock, memory_order_relaxed) &&
         !atomic_exchange_explicit(&t->lock, 1, memory_order_acquire);
}

/* Fork's handlers wait (yielding: the holder may be preempted). */
static void tlock(transfer_t *t) {
  while (!ttrylock(t)) sched_yield();
}

static void tunlock(transfer_t *t) { atomic_store_explicit(&t->lock, 0, memory_order_release); }

static uint32_t max_blocks(size_t cls) {
  return (uint32_t)(HSM_TRANSFER_BYTES / hsm_class_size[cls]);
}

static int room(const transfer_t *t, size_t cls, uint32_t n) {
  return atomic_load_explicit(&t->batches, memory_order_relaxed) < HSM_TRANSFER_SLOTS &&
         atomic_load_explicit(&t->blocks, memory_order_relaxed) + n <= max_blocks(cls);
}

/* The blocks of the class waiting here (read without the lock: a hint). */
uint32_t hsm_transfer_blocks(size_t cls) {
  return atomic_load_explicit(&transfer[cls].blocks, memory_order_relaxed);
}

/* The newest `count` blocks of the class's cache (all of them: 0) into the transfer
 * cache as one batch: 1, or 0 (nothing moved) when it has no room for them. */
int hsm_transfer_put(hsm_heap_t *self, size_t cls, uint32_t count) {
  hsm_page_t *cache = &self->cache[cls];
  uint32_t held = cache->reserved + 1 - cache->used;
  uint32_t n = count && count < held ? count : held;
  transfer_t *t = &transfer[cls];
  if (n == 0 || !room(t, cls, n)) return 0;
  /* Walked once, by runs of a page (the free marks), to cut it and to count other
   * heaps' blocks as remote frees, as a flush home does: the blocks were just freed,
   * the walk costs no cache miss, where the owner's drain and refill cost one each. */
  hsm_block_t *head = cache->free, *tail = head;
  uint32_t i = 1, remote = 0;
  for (;;) {
    uintptr_t mark = tail->mark;
    uint32_t run = 1;
    while (i + run <= n && tail->next->mark == mark) {
      tail = tail->next;
      run++;
    }
    if (((hsm_page_t *)(mark & ~HSM_MARK_FRESH))->heap != self) remote += run;
    i += run;
    if (i > n) break;
    tail = tail->next;
  }
  hsm_block_t *rest = tail->next;
  tail->next = NULL;
  if (!ttrylock(t)) {
    tail->next = rest;
    return 0;
  }
  if (!room(t, cls, n)) {
    tunlock(t);
    tail->next = rest;
    return 0;
  }
  uint32_t slot = atomic_load_explicit(&t->batches, memory_order_relaxed);
  t->head[slot] = head;
  t->count[slot] = n;
  atomic_store_explicit(&t->blocks, atomic_load_explicit(&t->blocks, memory_order_relaxed) + n,
                        memory_order_relaxed);
  atomic_store_explicit(&t->batches, slot + 1, memory_order_relaxed);
  tunlock(t);
  cache->free = rest;
  cache->used += n;
  cache->limit = HSM_READ(self->stats.allocs[cls]);
  HSM_COUNT(self->stats.transfer_out, n);
  HSM_COUNT(self->stats.remote_frees, remote);
  return 1;
}

/* The newest batch of the class into its empty cache: the blocks taken, 0 when there
 * is none (or, unless `wait`, when another thread holds the lock). The cache's room goes down by them (the caller's bound holds them: a batch
 * is at most the class's whole limit). */
uint32_t hsm_transfer_take(hsm_heap_t *self, size_t cls, int wait) {
  transfer_t *t = &transfer[cls];
  if (atomic_load_explicit(&t->batches, memory_order_relaxed) == 0) return 0;
  if (wait) tlock(t);
  else if (!ttrylock(t)) return 0;
  uint32_t slot = atomic_load_explicit(&t->batches, memory_order_relaxed);
  if (slot == 0) {
    tunlock(t);
    return 0;
  }
  slot--;
  hsm_block_t *head = t->head[slot];
  uint32_t n = t->count[slot];
  atomic_store_explicit(&t->blocks, atomic_load_explicit(&t->blocks, memory_order_relaxed) - n,
                        memory_order_relaxed);
  atomic_store_explicit(&t->batches, slot, memory_order_relaxed);
  tunlock(t);
  hsm_page_t *cache = &self->cache[cls];
  cache->free = head;
  cache->used -= n;
  HSM_COUNT(self->stats.transfer_in, n);
  return n;
}

/* Fork: no lock held across it (heap.c's handlers). */
void hsm_transfer_lock_all(void) {
  for (size_t c = 0; c < HSM_TRANSFER_CLASSES; c++) tlock(&transfer[c]);
}

void hsm_transfer_unlock_all(void) {
  for (size_t c = 0; c < HSM_TRANSFER_CLASSES; c++) tunlock(&transfer[c]);
}
