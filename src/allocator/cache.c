/* The thread cache: per class, every small block this thread frees, whichever heap owns
 * it, and the blocks it refilled from its own pages; malloc pops from it first.
 *
 * A cache is a pseudo-page (heap->cache[cls]): `free` its list, `reserved` its bound in
 * blocks, `used` its room: the bound less the blocks it holds, plus one (free's fast
 * path takes one from it while it is above 1, so that the test writes nothing where
 * there is no room: hsm_heap_empty's caches have none; an allocation from the cache
 * gives one back, a refill of n blocks takes n, a flush gives back what it sends).
 * The bound is the class's whole limit (hsm_cache_limit[cls], HSM_CACHE_BYTES of
 * blocks) while the thread allocates the class, HSM_CACHE_FREE_BYTES of blocks (at
 * least HSM_CACHE_MIN_BLOCKS) while it only frees it: a consumer of another thread's
 * blocks would hold them where nobody uses them while their owner carves fresh memory. `limit` (unused by a cache otherwise)
 * keeps the class's allocation count at the last flush, which tells the two apart.
 *
 * A flush sends the newest blocks home by runs (just touched by their frees: walking
 * them costs no cache miss; TCMalloc's thread cache does the same): consecutive blocks
 * with the same free
 * mark lie on the same page (the mark is the page's address, with HSM_MARK_FRESH on a
 * block never handed out), so a run goes onto its page's list in one step when the page
 * is this heap's (its count of blocks out down by the run's length: a parked full page
 * is unparked, an empty one may go back to its segment), or into the batch of the
 * page's heap, pushed onto that heap's remote queue with one compare-and-swap per
 * flush. Default mode only: secure mode's frees go to their page or home directly.
 */
#include "internal.h"

/* The bound of a cache whose thread only frees the class: HSM_CACHE_FREE_BYTES of
 * blocks (at least HSM_CACHE_MIN_BLOCKS, at most the class's limit). A hot slot's
 * class has no size yet (its limit is 0) when a heap is made before a heap takes the
 * slot: a bound of 0 sends the first free to the flush, which reads the limit then. */
static uint32_t free_bound(size_t cls) {
  uint32_t limit = hsm_cache_limit[cls];
  if (limit == 0) return 0;
  size_t batch = HSM_CACHE_FREE_BYTES / hsm_class_size[cls];
  if (batch < HSM_CACHE_MIN_BLOCKS) batch = HSM_CACHE_MIN_BLOCKS;
  return batch < limit ? (uint32_t)batch : limit;
}

/* What an empty cache takes from its page at a refill that walks the page's list (not
 * one that takes a whole list of returned blocks: page.c): twice the free-only bound
 * (HSM_CACHE_FREE_BYTES * 2 of blocks), not half the whole bound: a refill may carve
 * fresh memory, which a larger bound must not make resident. */
uint32_t hsm_cache_refill_count(const hsm_page_t *cache) {
  uint32_t want = 2 * free_bound(cache->class_id);
  return want < cache->reserved ? want : cache->reserved;
}

static void set_bound(hsm_page_t *cache, uint32_t bound) {
  cache->used += bound - cache->reserved; /* (unsigned: the difference may be negative) */
  cache->reserved = bound;
}

/* A cache is set up at its first use (its first refill, or the first free that finds
 * no room), not when its heap is made: a heap's caches are 20 KiB (two lines a class),
 * which a thread using a few classes would otherwise make resident at its start. A
 * cache not set up is all zeros: `used` 0 is no room, so free's fast path turns away
 * from it (a set-up cache's `used` is at least 1). */
static hsm_page_t *cache_setup(hsm_heap_t *heap, size_t cls) {
  hsm_page_t *cache = &heap->cache[cls];
  if (HSM_UNLIKELY(cache->used == 0)) {
    cache->class_id = (uint16_t)cls;
    cache->used = 1; /* no block held, a bound of 0 */
  }
  return cache;
}

/* The thread allocates the class from its empty cache: the whole bound. */
void hsm_cache_grow(hsm_heap_t *heap, size_t cls) {
  set_bound(cache_setup(heap, cls), hsm_cache_limit[cls]);
}

/* A run of one page's blocks, head .. tail (n of them, linked, each marked free), goes
 * home: onto the page's list when it is this heap's, else into its heap's batch (a
 * remote free, unless the thread that put it into the transfer cache counted it). */
static int run_home(hsm_heap_t *self, hsm_page_t *pg, hsm_block_t *head, hsm_block_t *tail,
                    uint32_t n, int counted) {
  if (pg->heap == self) {
    hsm_page_return_run(self, pg, head, tail, n);
    return 0;
  }
  if (!counted) HSM_COUNT(self->stats.remote_frees, n);
  hsm_rbatch_add_run(self, pg->heap, head, tail, n, (size_t)n * pg->block_size);
  return 1;
}

/* Secure mode: a run's first block of the cache (checked: a forged link stops here, as
 * it does at a block of the run: hsm_secure_same_page) and its page. */
static hsm_page_t *secure_page_of(hsm_block_t *b) {
  hsm_secure_check_free(b);
  return hsm_page_of(hsm_segment_of(b), b);
}

/* Send the newest `count` blocks of the cache home (every block: 0); `counted`: a
 * batch of the transfer cache, whose remote frees were counted when it was put. */
static void cache_flush_counted(hsm_heap_t *self, size_t cls, uint32_t count, int counted) {
  hsm_page_t *cache = &self->cache[cls];
  hsm_block_t *b = cache->free;
  cache->limit = HSM_READ(self->stats.allocs[cls]);
  uint32_t sent = 0, left = count ? count : UINT32_MAX;
  int remote = 0;
  while (b != NULL && sent < left) {
    hsm_block_t *head = b, *tail = b;
    uint32_t run = 1;
    hsm_page_t *pg;
    if (HSM_UNLIKELY(hsm_secure)) { /* marks are the blocks' own: runs by their pages */
      pg = secure_page_of(b);
      uint64_t limit = hsm_secure_run_limit(pg);
      while ((b = (hsm_block_t *)((uintptr_t)tail->next ^ hsm_remote_key)) != NULL &&
             sent + run < left && hsm_secure_same_page(pg, b, limit)) {
        tail = b;
        run++;
      }
    } else {
      uintptr_t mark = b->mark;
      uint32_t most = left - sent; /* the run's bound: one counter in the walk */
      pg = (hsm_page_t *)(mark & ~HSM_MARK_FRESH);
      while ((b = tail->next) != NULL && b->mark == mark && run < most) {
        tail = b;
        run++;
      }
    }
    sent += run;
    remote |= run_home(self, pg, head, tail, run, counted);
  }
  cache->free = b;
  cache->used += sent;
  if (remote) hsm_rbatch_flush_all(self); /* each owner's batch goes now */
}

static void cache_flush(hsm_heap_t *self, size_t cls, uint32_t count) {
  cache_flush_counted(self, cls, count, 0);
}

/* The cache has no room for the free of b (of page pg, marked free and counted). Its
 * bound is the whole limit if the thread allocated the class since the last flush (read
 * again: a hot slot sized since the heap was made), else the free-only bound; the
 * newest half of the bound (every block for the free-only bound, and for a class above
 * 8 KiB, whose cache holds one) goes to the transfer cache as one batch when it has
 * room (a fixed class up to 8 KiB, default mode, a process with a second heap), else
 * home; then b goes on. */
void hsm_cache_overflow(hsm_heap_t *self, hsm_page_t *pg, hsm_block_t *b) {
  size_t cls = pg->class_id;
  hsm_page_t *cache = cache_setup(self, cls);
  uint32_t limit = hsm_cache_limit[cls];
  int allocating = HSM_READ(self->stats.allocs[cls]) != cache->limit;
  uint32_t bound = allocating ? limit : free_bound(cls);
  set_bound(cache, bound);
  uint32_t count = allocating && limit > HSM_CACHE_BIG_BOUND ? bound / 2 : 0;
  if (cls >= HSM_TRANSFER_CLASSES || !hsm_transfer_on || hsm_secure ||
      !hsm_transfer_put(self, cls, count))
    cache_flush(self, cls, count);
  hsm_cache_push(cache, b);
}

/* Every HSM_IDLE_PAGE_SLOW slow paths (with hsm_cache_sweep_big): the cache of a fixed
 * class up to 8 KiB that holds HSM_CACHE_TRIM_BYTES of blocks or more beyond the
 * thread's live blocks of the class (its allocations less its frees) sends that excess
 * home, the newest first. A cache filled by a burst of frees otherwise kept its blocks
 * until the class was allocated again, and their pages could not empty: a class whose
 * live blocks once needed two pages kept both (espresso: its 48- and 64-byte classes
 * two pages each at the peak, 250 KiB resident for 1 KiB live; trimmed, its segments
 * held 1,052 KiB resident at the peak, not 1,308). Only while the process has one heap:
 * with threads a cache holds other heaps' blocks too, which a trim pushes to their
 * owners (larson: 6,340 trims in 5 s, a max RSS +0.5 to +1.0 MiB in two A/B runs of its
 * noisy row, not settled), and a thread that frees more of a class than it allocates
 * is left alone anyway. Cold (out of the hot text): laid out among cache.c's functions
 * it cost producer-consumer 9% of its CPU in a process where it never runs. */
__attribute__((cold)) void hsm_cache_trim(hsm_heap_t *heap) {
  if (atomic_load_explicit(&hsm_heaps_several, memory_order_relaxed)) return;
  for (size_t cls = 0; cls < HSM_IDLE_CLASS_FIRST; cls++) {
    hsm_page_t *cache = &heap->cache[cls];
    if (cache->free == NULL) continue;
    int64_t live = (int64_t)(HSM_READ(heap->stats.allocs[cls]) - HSM_READ(cache->frees));
    int64_t excess = (int64_t)cache->reserved + 1 - (int64_t)cache->used - live;
    if (live >= 0 && excess > 0 && (size_t)excess * hsm_class_size[cls] >= HSM_CACHE_TRIM_BYTES)
      cache_flush(heap, cls, (uint32_t)excess);
  }
}

/* The slow paths class HSM_IDLE_CLASS_FIRST + i waits idle before its reserve goes back,
 * and those since a sweep last found it allocating. */
static inline uint32_t idle_wait(const hsm_heap_t *heap, size_t i) {
  return (uint32_t)HSM_IDLE_PAGE_SLOW << heap->idle_wait[i];
}
static inline uint32_t idle_for(const hsm_heap_t *heap, size_t i) {
  return heap->slow_seq - heap->idle_seen[i];
}

/* Every HSM_IDLE_PAGE_SLOW slow paths: the caches of the fixed classes above 8 KiB that
 * were not allocated since the last sweep go home, and the class's current page with
 * them when that leaves it empty (it has been idle as long as an idle page is kept:
 * page.c). A block of a big class kept for good would hold its page, slices that other
 * sizes could use (realloc-large's 8 KiB - 1 MiB churn). A class's reserve of resident
 * free blocks (purge.c) goes back once the class has allocated nothing for
 * 2^idle_wait sweeps in a row: 1 at first, so that a class left for good (one a hot
 * class took over: ghost-cells' first 1,024 arrays) gives back at once, and twice as
 * many each time the class allocates again soon after giving back (within
 * HSM_IDLE_SOON waits of its last allocation: what it gave back stayed so for little,
 * and its refaults cost the same). A class used at a steady rate below one block a sweep
 * otherwise gave back and refaulted its blocks at every gap: xmalloc-test's producers
 * allocate one 32,776-byte batch every 48 slow paths or so, 2-4 sweeps, and gave back
 * the batches that came home in between (11,590 madvise calls, 285,000 pages given back
 * and faulted again in 5 s). One taken up again long after (espresso's 40,960-byte
 * class, every 46-56 sweeps) gives back every time, as before. */
void hsm_cache_sweep_big(hsm_heap_t *heap) {
  heap->sweep_ms = hsm_now_ms();
  for (size_t i = 0; i < HSM_FIXED_CLASSES - HSM_IDLE_CLASS_FIRST; i++) {
    size_t cls = HSM_IDLE_CLASS_FIRST + i;
    uint64_t allocs = HSM_READ(heap->stats.allocs[cls]);
    if (allocs == heap->idle_allocs[i]) {
      if (heap->cache[cls].free != NULL) {
        cache_flush(heap, cls, 0);
        hsm_page_free_idle(heap, cls);
      }
      if (heap->resident_free[cls] != 0 && idle_for(heap, i) >= idle_wait(heap, i)) {
        hsm_purge_idle_class(heap, cls);
        heap->idle_gave |= 1u << i;
      }
      continue;
    }
    /* given back, and taken up again within HSM_IDLE_SOON waits: saved for little */
    if ((heap->idle_gave & 1u << i) && heap->idle_wait[i] < HSM_IDLE_WAIT_MAX &&
        idle_for(heap, i) <= HSM_IDLE_SOON * idle_wait(heap, i))
      heap->idle_wait[i]++;
    heap->idle_gave &= ~(1u << i);
    heap->idle_allocs[i] = allocs;
    heap->idle_seen[i] = heap->slow_seq;
  }
}

/* Before class cls takes a fresh page, when the heap's free slices hold less than a
 * slice of resident pages for it: each other fixed class up to 8 KiB idle (not
 * allocated while the heap made HSM_UNUSED_ALLOCS allocations of these classes, as seen
 * at its fresh pages), whose only page has no block out but those in this thread's cache
 * and the transfer cache, sends them home (the transfer cache's batches of the class
 * with them), and the page goes back to its segment, where the fresh page is placed on
 * its resident memory (placement.c takes the most resident free slice). A program that
 * moves from one size to the next (glibc-simple: 1600 blocks of 16, then 32, then 64
 * bytes, in two threads in turn) kept every earlier size's carved pages resident beside
 * the new one's. Only at a fresh page that would touch fresh memory, and only for a
 * class long idle: one that merely had no block live for a moment (glibc-thread's random
 * sizes) would be carved again at once, and where free slices are resident (espresso's,
 * of its pages above 4 KiB) a released page's slice went to the fresh page and the
 * released class, made again, touched fresh memory (+130 KiB). */
void hsm_cache_release_unused(hsm_heap_t *heap, size_t cls) {
  int room = hsm_segment_free_resident(heap, HSM_SLICE_SIZE / 4096) >= HSM_SLICE_SIZE / 4096;
  uint64_t total = 0;
  for (size_t c = 0; c < HSM_IDLE_CLASS_FIRST; c++) total += HSM_READ(heap->stats.allocs[c]);
  for (size_t c = 0; c < HSM_IDLE_CLASS_FIRST; c++) {
    uint64_t allocs = HSM_READ(heap->stats.allocs[c]);
    if (allocs != heap->fresh_allocs[c] || c == cls) {
      heap->fresh_allocs[c] = allocs;
      heap->fresh_total[c] = total;
      continue;
    }
    hsm_page_t *pg = heap->direct[c], *cache = &heap->cache[c];
    if (room || total - heap->fresh_total[c] < HSM_UNUSED_ALLOCS || pg == &hsm_page_empty ||
        heap->queue[c].first != pg || pg->next != NULL)
      continue;
    uint32_t held = cache->used ? cache->reserved + 1 - cache->used : 0;
    if (pg->used > held + hsm_transfer_blocks(c)) continue; /* blocks out: the page stays */
    if (held) cache_flush(heap, c, 0);
    while (hsm_transfer_take(heap, c, 0)) cache_flush_counted(heap, c, 0, 1);
    hsm_page_free_unused(heap, c);
  }
}

/* Every block of the class's cache home (a hot class retiring). */
void hsm_cache_flush_class(hsm_heap_t *heap, size_t cls) {
  if (heap->cache[cls].free != NULL) cache_flush(heap, cls, 0);
}

/* Every cache home (thread exit, hsmalloc_collect). */
void hsm_cache_flush_all(hsm_heap_t *heap) {
  for (size_t cls = 0; cls < HSM_CLASSES; cls++) hsm_cache_flush_class(heap, cls);
}

/* Every batch of the transfer cache home (hsmalloc_collect): each taken into this
 * heap's empty cache of its class and sent home from there. */
void hsm_cache_flush_transfer(hsm_heap_t *heap) {
  for (size_t cls = 0; cls < HSM_TRANSFER_CLASSES; cls++)
    while (hsm_transfer_take(heap, cls, 1)) cache_flush_counted(heap, cls, 0, 1);
}
