/* Pages: the per-class page queues of a heap, carving fresh blocks, the
 * allocation slow path, owner-side frees, and page retirement. */
#include <string.h>

#include "internal.h"

hsm_page_t hsm_page_empty; /* the "current page" of a class that has none: never has a free block */

void hsm_queue_remove(hsm_page_queue_t *q, hsm_page_t *pg) {
  if (pg->prev) pg->prev->next = pg->next;
  else q->first = pg->next;
  if (pg->next) pg->next->prev = pg->prev;
  else q->last = pg->prev;
  pg->next = pg->prev = NULL;
}

void hsm_queue_push_front(hsm_page_queue_t *q, hsm_page_t *pg) {
  pg->prev = NULL;
  pg->next = q->first;
  if (q->first) q->first->prev = pg;
  else q->last = pg;
  q->first = pg;
}

static void queue_push_back(hsm_page_queue_t *q, hsm_page_t *pg) {
  pg->next = NULL;
  pg->prev = q->last;
  if (q->last) q->last->next = pg;
  else q->first = pg;
  q->last = pg;
}

void hsm_page_set_direct(hsm_heap_t *heap, size_t cls) {
  hsm_page_t *first = heap->queue[cls].first;
  hsm_direct_set(heap, cls, first ? first : &hsm_page_empty);
}

/* Link a fresh run of blocks onto the (empty) free list, a few KiB at a time so
 * that untouched memory stays untouched (in random order in secure mode). */
static void page_extend(hsm_page_t *pg) {
  size_t bsize = pg->block_size;
  size_t n = HSM_EXTEND_BYTES / bsize;
  if (n < 1) n = 1;
  uint32_t capacity = hsm_page_capacity(pg);
  if (n > pg->reserved - capacity) n = pg->reserved - capacity;
  uint8_t *first = pg->start + (size_t)capacity * bsize;
  if (HSM_UNLIKELY(pg->flags.f.secure)) {
    pg->free = hsm_secure_link_run(pg, first, n);
  } else {
    uint8_t *p = first;
    for (size_t i = 1; i < n; i++, p += bsize)
      ((hsm_block_t *)p)->next = (hsm_block_t *)(p + bsize);
    ((hsm_block_t *)p)->next = NULL;
    pg->free = (hsm_block_t *)first;
  }
  pg->free_is_zero = pg->span_zero;
  /* read by other threads' frees: of the page's flagged blocks (the generic path), and
   * off the page's first line (remote_limit: the others) */
  uint64_t limit = (uint64_t)(capacity + n) * hsm_block_step(pg);
  __atomic_store_n(&pg->limit, limit, __ATOMIC_RELAXED);
  __atomic_store_n(&pg->remote_limit, (uint32_t)limit, __ATOMIC_RELAXED);
}

static hsm_page_t *page_new(hsm_heap_t *heap, size_t cls) {
  hsm_page_t *pg = hsm_segment_page_alloc_class(heap, cls);
  if (pg == NULL) return NULL;
  pg->class_id = (uint16_t)cls;
  pg->block_size = hsm_class_size[cls];
  pg->div_magic = hsm_div_magic(pg->block_size);
  pg->start_magic = (uint64_t)(uintptr_t)pg->start * pg->div_magic;
  pg->limit = 0;
  pg->reserved = (uint32_t)(((size_t)pg->slice_count * HSM_SLICE_SIZE) / pg->block_size);
  /* nothing carved yet; a limit is below reserved * block size (2 MiB at most), so it
   * fits in 32 bits */
  __atomic_store_n(&pg->remote_limit, 0, __ATOMIC_RELAXED);
  if (HSM_UNLIKELY(hsm_secure)) hsm_secure_page_init(heap, pg);
  return pg;
}

/* The page's fast-path frees into its heap's counters (the owner, or under heaps_lock
 * for an abandoned heap). */
static void page_harvest(hsm_heap_t *heap, hsm_page_t *pg) {
  uint64_t n = HSM_READ(pg->frees);
  if (n == 0) return;
  HSM_COUNT(heap->stats.frees[pg->class_id], n);
  HSM_SET(pg->frees, 0);
}

/* Back to its segment. Free's fast paths and the checks must no longer take the page's
 * old blocks for live ones: fast_owner NULL sends a late free of the owner's to the
 * generic path, which finds the page not in use; remote_limit 0 makes another
 * thread's free reject it. */
void hsm_page_release(hsm_heap_t *heap, hsm_page_t *pg) {
  __atomic_store_n(&pg->fast_owner, NULL, __ATOMIC_RELAXED);
  page_harvest(heap, pg);
  __atomic_store_n(&pg->remote_limit, 0, __ATOMIC_RELAXED);
  hsm_segment_page_free(heap, pg);
}

static void page_free(hsm_heap_t *heap, hsm_page_t *pg) {
  if (!pg->flags.f.is_large) {
    hsm_page_queue_t *q = pg->used & HSM_USED_FULL ? &heap->full : &heap->queue[pg->class_id];
    hsm_queue_remove(q, pg);
    if (heap->direct[pg->class_id] == pg) hsm_page_set_direct(heap, pg->class_id);
  }
  hsm_page_release(heap, pg);
}

/* A page whose blocks are all free goes back to its segment, unless it is the
 * class's current page (keeping one avoids freeing and re-carving a page when a
 * program allocates and frees one block in a loop), or a page of a hot class the heap
 * keeps (postponed free, hot.c). The current page of a class above 8 KiB is kept only
 * until HSM_IDLE_PAGE_SLOW slow paths have passed (hsm_heap_expire_idle).
 * While the class's current page is this thread's cache of other heaps' blocks (which
 * stays current after it is sent home, remote.c), the page the class's next slow path
 * takes, the first on its queue, counts as the current one: a thread that both
 * allocates a class and frees another thread's blocks of it (handover: two threads
 * swap their working sets each round) gave back and re-carved a page of the class
 * every round or two without it (8096 pages taken in 2000 rounds, now 38). */
/* The class's current page: direct, or while direct is the cache of other heaps'
 * blocks, the first page on the class's queue (what its next slow path takes). */
static hsm_page_t *current_page(hsm_heap_t *heap, size_t cls) {
  hsm_page_t *pg = heap->direct[cls];
  return pg == &heap->cache[cls] ? heap->queue[cls].first : pg;
}

static void page_retire(hsm_heap_t *heap, hsm_page_t *pg) {
  size_t cls = pg->class_id;
  int hot = hsm_is_hot(cls);
  hsm_page_t *current = current_page(heap, cls);
  /* (a retired hot class has no current page worth keeping) */
  if (!pg->flags.f.is_large && current == pg && (!hot || heap->hot_on[cls - HSM_FIXED_CLASSES])) {
    if (cls >= HSM_IDLE_CLASS_FIRST && cls < HSM_FIXED_CLASSES) {
      heap->idle_pages |= 1u << (cls - HSM_IDLE_CLASS_FIRST);
      heap->idle_since[cls - HSM_IDLE_CLASS_FIRST] = heap->slow_seq;
    }
    return;
  }
  if (hot && hsm_hot_keep(heap, pg)) return;
  page_free(heap, pg);
}

/* Give back the empty current pages of big classes kept since HSM_IDLE_PAGE_SLOW slow
 * paths or more, but class `cls`'s (being allocated now). A program that allocates and
 * frees a 100 KiB block in a loop keeps its page (it never takes the slow path); one
 * that has gone on to other sizes gets the page's carved, resident blocks back as free
 * slices, which blocks of any size reuse (realloc-large held up to 4.6 MiB in such pages: one
 * a class, 32 classes). */
_Static_assert(HSM_FIXED_CLASSES - HSM_IDLE_CLASS_FIRST <= 32, "idle_pages is one 32-bit mask");
void hsm_heap_expire_idle(hsm_heap_t *heap, size_t cls) {
  if (cls >= HSM_IDLE_CLASS_FIRST && cls < HSM_FIXED_CLASSES)
    heap->idle_pages &= ~(1u << (cls - HSM_IDLE_CLASS_FIRST));
  uint32_t mask = heap->idle_pages;
  while (mask) {
    unsigned i = (unsigned)__builtin_ctz(mask);
    mask &= mask - 1;
    if (heap->slow_seq - heap->idle_since[i] < HSM_IDLE_PAGE_SLOW) continue;
    heap->idle_pages &= ~(1u << i);
    size_t c = HSM_IDLE_CLASS_FIRST + i;
    /* (when a cache of other heaps' blocks became direct since, the page kept empty is
     * first on the class's queue: no slow path of the class since, none pushed before
     * it; skipped, it stayed until the class's next slow path, however far off) */
    hsm_page_t *pg = current_page(heap, c);
    /* still an empty page in use (not none) */
    if (pg != NULL && pg != &hsm_page_empty && pg->used == 0 && pg->in_use && !pg->kept)
      page_free(heap, pg);
  }
}

/* After the owner put a block back: a parked full page can give again; an empty
 * page may go back to its segment. */
void hsm_page_after_free(hsm_heap_t *heap, hsm_page_t *pg) {
  if (pg->used & HSM_USED_FULL) {
    hsm_queue_remove(&heap->full, pg);
    pg->used &= ~HSM_USED_FULL;
    queue_push_back(&heap->queue[pg->class_id], pg);
    if (heap->direct[pg->class_id] == &hsm_page_empty) hsm_page_set_direct(heap, pg->class_id);
  }
  if (pg->used == 0) page_retire(heap, pg);
}

/* b carries its free mark already (set by the free that sent it here). */
void hsm_page_free_block(hsm_heap_t *heap, hsm_page_t *pg, hsm_block_t *b) {
  b->next = hsm_link(pg, pg->local_free);
  pg->local_free = b;
  if ((int32_t)--pg->used <= 0) hsm_page_after_free(heap, pg);
}

void *hsm_page_alloc_slow(hsm_heap_t *heap, size_t size, size_t cls, int zero) {
  HSM_COUNT(heap->stats.slow[cls], 1);
  hsm_heap_slow_tick(heap, cls);
  if (--heap->slow_until_decay == 0) hsm_heap_maintenance(heap);
  hsm_page_t *pg = &heap->cache[cls];
  if (pg->free != NULL) goto pop; /* other heaps' blocks freed here: hot */
  heap->cache_left[cls] = hsm_cache_limit[cls];
  if (atomic_load_explicit(&heap->remote, memory_order_relaxed) != NULL)
    hsm_heap_drain_remote(heap);
  hsm_page_queue_t *q = &heap->queue[cls];
  while ((pg = q->first) != NULL) {
    if (pg->free == NULL) {
      if (pg->local_free != NULL) {
        pg->free = pg->local_free;
        pg->local_free = NULL;
        pg->free_is_zero = 0;
      } else if (pg->limit < pg->reserved * hsm_block_step(pg)) { /* capacity < reserved */
        page_extend(pg);
      }
    }
    if (pg->free != NULL) break;
    hsm_queue_remove(q, pg); /* nothing left: park it until a block comes back */
    pg->used |= HSM_USED_FULL;
    hsm_queue_push_front(&heap->full, pg);
  }
  if (pg == NULL && hsm_is_hot(cls)) pg = hsm_hot_take_kept(heap, cls);
  if (pg != NULL && pg->free == NULL) { /* a kept page: all its blocks are free */
    pg->free = pg->local_free;
    pg->local_free = NULL;
    pg->free_is_zero = 0;
    if (pg->free == NULL) page_extend(pg);
  } else if (pg == NULL) {
    pg = page_new(heap, cls);
    if (pg == NULL) {
      hsm_page_set_direct(heap, cls);
      return NULL;
    }
    hsm_queue_push_front(q, pg);
    page_extend(pg);
  }
pop:
  if (heap->direct[cls] != pg) hsm_direct_set(heap, cls, pg);
  return hsm_page_pop(heap, pg, cls, size, zero);
}

/* The block p starts (or, on a page with aligned blocks, lies in), after the checks:
 * the page is in use, p is a block start (or inside a block handed out, for aligned
 * blocks), and the block is not free already. Other threads read the page's first
 * line and its carved count here, which the owner changes only while the page holds
 * no block of theirs. */
hsm_block_t *hsm_checked_block(hsm_page_t *pg, void *p, const char *fn) {
  if (HSM_UNLIKELY(!__atomic_load_n(&pg->in_use, __ATOMIC_RELAXED))) hsm_bad_free(fn, p);
  int aligned = __atomic_load_n(&pg->flags.f.has_aligned, __ATOMIC_RELAXED);
  hsm_block_t *b;
  if (__atomic_load_n(&pg->flags.f.is_large, __ATOMIC_RELAXED)) {
    b = (hsm_block_t *)pg->start;
    if (HSM_UNLIKELY(aligned ? (uint8_t *)p >= pg->start + pg->block_size : p != (void *)b))
      hsm_bad_free(fn, p);
  } else {
    b = aligned ? hsm_block_start(pg, p) : (hsm_block_t *)p;
    if (HSM_UNLIKELY(!hsm_block_ok(pg, b, hsm_carved_limit(pg)))) hsm_bad_free(fn, p);
  }
  if (HSM_UNLIKELY(b->mark == hsm_mark(pg))) hsm_double_free(fn, p);
  return b;
}

void hsm_page_free_generic(hsm_heap_t *self, hsm_page_t *pg, void *p) {
  hsm_block_t *b = hsm_checked_block(pg, p, "free");
  b->mark = hsm_mark(pg); /* on its way to a free list: a second free finds it */
  size_t bin = pg->class_id;
  if (self == NULL) self = hsm_heap_for_free();
  if (self == NULL) {
    atomic_fetch_add_explicit(&hsm_gstats.orphan_frees, 1, memory_order_relaxed);
  } else {
    HSM_COUNT(self->stats.frees[bin], 1);
    if (bin == HSM_BIN_LARGE) HSM_COUNT(self->stats.free_bytes[bin], pg->block_size);
    if (pg->heap != self) HSM_COUNT(self->stats.remote_frees, 1);
  }
  if (pg->heap == self) {
    hsm_page_free_block(self, pg, b);
  } else if (self != NULL && bin != HSM_BIN_LARGE && !hsm_secure) { /* this thread's cache */
    hsm_page_t *cache = &self->cache[bin];
    if (cache->free == NULL) { /* its owner and tail (remote.c's cache_flush) */
      cache->heap = pg->heap;
      cache->local_free = b;
    } else if (cache->heap != pg->heap) { /* more than one heap's blocks: no tail */
      cache->heap = pg->heap;
      cache->local_free = NULL;
    }
    b->next = cache->free;
    cache->free = b;
    if (self->direct[bin] != cache) hsm_direct_set(self, bin, cache);
    if (--self->cache_left[bin] == 0) hsm_cache_overflow(self, bin);
  } else {
    hsm_remote_free(self, pg, b);
  }
}

static void page_abandon(hsm_heap_t *heap, hsm_page_t *pg);

/* Give back the pages of class `cls` with no block out; `abandon`: the others lose
 * their fast owner (page_abandon). */
static void free_empty_pages(hsm_heap_t *heap, size_t cls, int abandon) {
  hsm_page_t *pg = heap->queue[cls].first;
  while (pg != NULL) {
    hsm_page_t *next = pg->next;
    if (pg->used == 0) {
      hsm_queue_remove(&heap->queue[cls], pg);
      hsm_page_release(heap, pg);
    } else if (abandon) {
      page_abandon(heap, pg);
    }
    pg = next;
  }
}
void hsm_heap_free_empty_pages(hsm_heap_t *heap, size_t cls) { free_empty_pages(heap, cls, 0); }

static void collect_empty(hsm_heap_t *heap, int abandon) {
  hsm_hot_release_kept(heap);
  heap->idle_pages = 0;
  for (size_t cls = 0; cls < HSM_CLASSES; cls++) {
    free_empty_pages(heap, cls, abandon);
    hsm_page_set_direct(heap, cls);
  }
}

/* Give back every page with no block out, and the pages postponed free kept (used
 * when a heap is abandoned or collected). */
void hsm_heap_collect_empty(hsm_heap_t *heap) { collect_empty(heap, 0); }

/* Every small page of the heap is on one of its queues, its full list or a kept list
 * (large pages have no fast owner and no fast-path frees). */
static void heap_pages_each(hsm_heap_t *heap, void (*fn)(hsm_heap_t *, hsm_page_t *)) {
  for (size_t c = 0; c < HSM_CLASSES; c++)
    for (hsm_page_t *pg = heap->queue[c].first; pg != NULL; pg = pg->next) fn(heap, pg);
  for (hsm_page_t *pg = heap->full.first; pg != NULL; pg = pg->next) fn(heap, pg);
  for (size_t k = 0; k < HSM_HOT_SLOTS; k++)
    for (hsm_page_t *pg = heap->kept[k].first; pg != NULL; pg = pg->next) fn(heap, pg);
}

void hsm_heap_harvest(hsm_heap_t *heap) { heap_pages_each(heap, page_harvest); }

static void page_abandon(hsm_heap_t *heap, hsm_page_t *pg) {
  __atomic_store_n(&pg->fast_owner, NULL, __ATOMIC_SEQ_CST);
  page_harvest(heap, pg);
}
void hsm_heap_pages_abandon(hsm_heap_t *heap) { heap_pages_each(heap, page_abandon); }

/* At thread exit: hsm_heap_collect_empty and hsm_heap_pages_abandon in one walk of
 * the classes (threads that come and go pay it each time); the kept lists are empty
 * by then (collect_empty gives their pages back). */
void hsm_heap_collect_abandon(hsm_heap_t *heap) {
  collect_empty(heap, 1);
  for (hsm_page_t *pg = heap->full.first; pg != NULL; pg = pg->next) page_abandon(heap, pg);
}

/* Another thread may set a flag meanwhile (memalign on a block of the page from its
 * cache: the flag, then fast_owner NULL): the owner is set only from NULL, and taken
 * back if a flag came before the flag's setter could see it. */
static void page_adopt(hsm_heap_t *heap, hsm_page_t *pg) {
  (void)heap;
  if (__atomic_load_n(&pg->flags.any, __ATOMIC_SEQ_CST) != 0) return;
  void *none = NULL;
  if (!__atomic_compare_exchange_n(&pg->fast_owner, &none, hsm_thread_self(), 0, __ATOMIC_SEQ_CST,
                                   __ATOMIC_SEQ_CST))
    return;
  if (__atomic_load_n(&pg->flags.any, __ATOMIC_SEQ_CST) != 0)
    __atomic_store_n(&pg->fast_owner, NULL, __ATOMIC_SEQ_CST);
}
void hsm_heap_pages_adopt(hsm_heap_t *heap) { heap_pages_each(heap, page_adopt); }
