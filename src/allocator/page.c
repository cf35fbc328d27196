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
    /* each marked free and fresh (the page's address with bit 0 set): a cache's flush
     * finds the page of every block it holds in its mark, and calloc knows a block
     * never handed out (hsm_page_pop) */
    uintptr_t mark = (uintptr_t)pg | HSM_MARK_FRESH;
    uint8_t *p = first;
    for (size_t i = 1; i < n; i++, p += bsize) {
      ((hsm_block_t *)p)->next = (hsm_block_t *)(p + bsize);
      ((hsm_block_t *)p)->mark = mark;
    }
    ((hsm_block_t *)p)->next = NULL;
    ((hsm_block_t *)p)->mark = mark;
    pg->free = (hsm_block_t *)first;
  }
  pg->free_cold = 1; /* (fresh blocks are not resident: purge.c) */
  /* read by every thread's frees: by the slow path (checked blocks), and off the page's
   * first line by the fast path, which a secure page's frees must not take */
  uint64_t limit = (uint64_t)(capacity + n) * hsm_block_step(pg);
  __atomic_store_n(&pg->limit, limit, __ATOMIC_RELAXED);
  if (!pg->flags.f.secure) __atomic_store_n(&pg->free_limit, limit, __ATOMIC_RELAXED);
}

static hsm_page_t *page_new(hsm_heap_t *heap, size_t cls) {
  hsm_page_t *pg = hsm_segment_page_alloc_class(heap, cls);
  if (pg == NULL) return NULL;
  pg->class_id = (uint16_t)cls;
  pg->cache_off = (uint32_t)(offsetof(hsm_heap_t, cache) + cls * sizeof(hsm_page_t));
  pg->block_size = hsm_class_size[cls];
  pg->div_magic = hsm_div_magic(pg->block_size);
  pg->start_magic = (uint64_t)(uintptr_t)pg->start * pg->div_magic;
  pg->limit = 0;
  pg->reserved = (uint32_t)(((size_t)pg->slice_count * HSM_SLICE_SIZE) / pg->block_size);
  __atomic_store_n(&pg->free_limit, 0, __ATOMIC_RELAXED); /* nothing carved yet */
  pg->purging = (uint8_t)hsm_purge_class(cls);
  if (HSM_UNLIKELY(hsm_secure)) hsm_secure_page_init(heap, pg);
  return pg;
}

/* Back to its segment. free's checks must no longer take the page's old blocks for
 * live ones: free_limit 0 sends every free into the page to the slow path, which finds
 * the page not in use. */
void hsm_page_release(hsm_heap_t *heap, hsm_page_t *pg) {
  __atomic_store_n(&pg->free_limit, 0, __ATOMIC_RELAXED);
  hsm_segment_page_free(heap, pg);
}

static void page_free(hsm_heap_t *heap, hsm_page_t *pg) {
  if (pg->purging) hsm_purge_leave(heap, pg);
  if (!pg->flags.f.is_large) {
    hsm_page_queue_t *q = pg->used & HSM_USED_FULL ? &heap->full : &heap->queue[pg->class_id];
    hsm_queue_remove(q, pg);
    if (heap->direct[pg->class_id] == pg) hsm_page_set_direct(heap, pg->class_id);
  }
  hsm_page_release(heap, pg);
}

/* A page whose blocks are all free goes back to its segment, unless it is the
 * class's current page, the one the thread's cache refills from (keeping one avoids
 * freeing and re-carving a page when a program allocates and frees a few blocks in a
 * loop), or a page of a hot class the heap keeps (postponed free, hot.c). The current
 * page of a class above 8 KiB is kept only until HSM_IDLE_PAGE_SLOW slow paths have
 * passed (hsm_heap_expire_idle). */
static hsm_page_t *current_page(hsm_heap_t *heap, size_t cls) { return heap->direct[cls]; }

/* Secure mode: an empty page of a class up to 8 KiB goes to the front of its queue
 * rather than back to its segment, while the empty pages there hold less than
 * HSM_SECURE_KEEP_BYTES, so that its blocks are handed out again as they are: a page
 * carved again costs a shuffle, an encoded link and a mark per block (xmalloc-test,
 * whose producers' pages all come back empty, carved 0.8 fresh blocks per allocation
 * and spent a tenth of its instructions on it). The kept blocks are checked as they
 * leave the page's list, as any returned block is. Not while memory is to go back at
 * once (HSMALLOC_DECAY_MS=0, pressure); the pages go back when the heap is collected. */
static int secure_keep(hsm_heap_t *heap, hsm_page_t *pg) {
  size_t cls = pg->class_id, bytes = 0;
  if (pg->flags.f.is_large || cls >= HSM_IDLE_CLASS_FIRST || hsm_purge_at_once()) return 0;
  hsm_page_queue_t *q = &heap->queue[cls];
  for (hsm_page_t *p = q->first; p != NULL && p->used == 0; p = p->next)
    if (p != pg && (bytes += (size_t)p->slice_count * HSM_SLICE_SIZE) >= HSM_SECURE_KEEP_BYTES)
      return 0;
  hsm_queue_remove(q, pg);
  hsm_queue_push_front(q, pg);
  return 1;
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
  if (hot && hsm_hot_keep(heap, pg)) {
    if (pg->purging) hsm_purge_leave(heap, pg); /* (back with hsm_hot_take_kept) */
    return;
  }
  if (HSM_UNLIKELY(pg->flags.f.secure) && secure_keep(heap, pg)) return;
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
    hsm_page_t *pg = current_page(heap, c);
    /* still an empty page in use (not none) */
    if (pg != NULL && pg != &hsm_page_empty && pg->used == 0 && pg->in_use && !pg->kept)
      page_free(heap, pg);
  }
}

/* Class cls's current page, when it is empty, back to its segment now (its cache was
 * sent home for being idle: cache.c). */
void hsm_page_free_idle(hsm_heap_t *heap, size_t cls) {
  hsm_page_t *pg = current_page(heap, cls);
  if (pg != &hsm_page_empty && pg->used == 0 && pg->in_use && !pg->kept) {
    heap->idle_pages &= ~(1u << (cls - HSM_IDLE_CLASS_FIRST));
    page_free(heap, pg);
  }
}

/* Class cls's current page back to its segment when it is its class's only page and
 * has no block out (its thread's cache was just sent home: cache.c's
 * hsm_cache_release_unused). */
void hsm_page_free_unused(hsm_heap_t *heap, size_t cls) {
  hsm_page_t *pg = current_page(heap, cls);
  if (pg != &hsm_page_empty && pg->used == 0 && pg->in_use && !pg->kept) page_free(heap, pg);
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

/* head .. tail (n blocks, linked) onto pg's list of returned blocks; on a purging page,
 * those beyond its class's reserve are purged (purge.c). */
static inline void blocks_home(hsm_heap_t *heap, hsm_page_t *pg, hsm_block_t *head,
                               hsm_block_t *tail, uint32_t n) {
  if (HSM_UNLIKELY(pg->purging)) {
    uint32_t *resident = &heap->resident_free[pg->class_id];
    if (*resident + n > hsm_class_reserve[pg->class_id]) {
      hsm_purge_home(heap, pg, head, tail, n);
      return;
    }
    *resident += n;
  }
  tail->next = hsm_link(pg, pg->local_free);
  pg->local_free = head;
}

/* b carries its free mark already (set by the free that sent it here). */
void hsm_page_free_block(hsm_heap_t *heap, hsm_page_t *pg, hsm_block_t *b) {
  blocks_home(heap, pg, b, b, 1);
  if ((int32_t)--pg->used <= 0) hsm_page_after_free(heap, pg);
}

void hsm_page_return_run(hsm_heap_t *heap, hsm_page_t *pg, hsm_block_t *head, hsm_block_t *tail,
                         uint32_t n) {
  blocks_home(heap, pg, head, tail, n);
  pg->used -= n;
  if ((int32_t)pg->used <= 0) hsm_page_after_free(heap, pg);
}

/* pg's `free` list is empty: its returned blocks, else fresh ones carved, else (a
 * purging page) the blocks whose pages went back. */
static void take_free(hsm_page_t *pg) {
  if (pg->local_free != NULL) {
    pg->free = pg->local_free;
    pg->local_free = NULL;
    pg->free_cold = 0;
  } else if (pg->purged != NULL && pg->purging) {
    pg->free = pg->purged;
    pg->purged = NULL;
    pg->free_cold = 1;
  } else if (pg->limit < pg->reserved * hsm_block_step(pg)) { /* capacity < reserved */
    page_extend(pg);
  }
}

/* The class's current page with a free block on `free` (its second list moved there,
 * or fresh blocks carved), pages with nothing left parked full on the way; a page
 * postponed free kept, or a new one; NULL without memory. */
static hsm_page_t *page_with_free(hsm_heap_t *heap, size_t cls) {
  hsm_page_queue_t *q = &heap->queue[cls];
  hsm_page_t *pg, *passed = NULL;
  while ((pg = q->first) != NULL) {
    /* resident free blocks of a purging class first: a page without any goes to the
     * back, until the first page passed over comes round again (purge.c) */
    if (HSM_UNLIKELY(pg->purging) && pg != passed && heap->resident_free[cls] != 0 &&
        (pg->free == NULL || pg->free_cold) && hsm_purge_pass_over(heap, pg)) {
      if (passed == NULL) passed = pg;
      if (pg->next != NULL) {
        hsm_queue_remove(q, pg);
        queue_push_back(q, pg);
        continue;
      }
    }
    if (pg->free == NULL) take_free(pg);
    if (pg->free != NULL) break;
    hsm_queue_remove(q, pg); /* nothing left: park it until a block comes back */
    pg->used |= HSM_USED_FULL;
    hsm_queue_push_front(&heap->full, pg);
  }
  if (pg == NULL && hsm_is_hot(cls)) pg = hsm_hot_take_kept(heap, cls);
  if (pg != NULL && pg->free == NULL) { /* a kept page: all its blocks are free */
    if (pg->purging) hsm_purge_enter(heap, pg);
    take_free(pg);
  } else if (pg == NULL) {
    if (cls < HSM_IDLE_CLASS_FIRST && !hsm_secure) hsm_cache_release_unused(heap, cls);
    pg = page_new(heap, cls);
    if (pg == NULL) {
      hsm_page_set_direct(heap, cls);
      return NULL;
    }
    hsm_queue_push_front(q, pg);
    page_extend(pg);
  }
  if (heap->direct[cls] != pg) hsm_direct_set(heap, cls, pg);
  return pg;
}

/* A refill took n blocks of purging page pg's `free`: resident ones leave the class's
 * count. */
static void took_from(hsm_page_t *pg, uint32_t n) {
  uint32_t *resident = &pg->heap->resident_free[pg->class_id];
  if (!pg->free_cold) *resident = *resident > n ? *resident - n : 0;
}

/* The empty cache takes pg's free blocks: the whole list when that is all of them and
 * they fit, else up to hsm_cache_refill_count of them, in list order (fresh ones are in
 * address order, returned ones in runs of the page); they count as out of the page, and
 * as held by the cache (its room), from now on. */
static void cache_refill(hsm_page_t *cache, hsm_page_t *pg) {
  hsm_block_t *head = pg->free, *tail = head, *next; /* (links encoded in secure mode) */
  if (pg->local_free == NULL && pg->purged == NULL) {
    /* `free` holds every carved block not out, so their number is known: when the cache
     * has room for them all, the list moves whole, unwalked (a refill of blocks its
     * flushes sent back, and of a fresh carve: no list walk per block) */
    uint32_t all = hsm_page_capacity(pg) - pg->used;
    if (all <= cache->reserved) {
      if (HSM_UNLIKELY(pg->purging)) took_from(pg, all);
      pg->free = NULL;
      cache->free = head;
      cache->used -= all;
      pg->used += all;
      return;
    }
  }
  uint32_t want = hsm_cache_refill_count(cache), n = 1;
  while (n < want && (next = hsm_link(pg, tail->next)) != NULL) {
    tail = next;
    n++;
  }
  if (HSM_UNLIKELY(pg->purging)) took_from(pg, n);
  pg->free = hsm_link(pg, tail->next);
  tail->next = hsm_link(pg, NULL);
  cache->free = head;
  cache->used -= n;
  pg->used += n;
}

/* malloc's slow path: the class's cache refilled when it is empty (its whole bound from
 * now on: the thread allocates the class), from the class's current page. */
int hsm_page_fill_cache(hsm_heap_t *heap, size_t cls) {
  HSM_COUNT(heap->stats.slow[cls], 1);
  hsm_heap_slow_tick(heap, cls);
  if (--heap->slow_until_decay == 0) hsm_heap_maintenance(heap);
  hsm_page_t *cache = &heap->cache[cls];
  if (cache->free != NULL) return 1; /* a window, or a default chain, missed the fast path */
  if (cls < HSM_TRANSFER_CLASSES) {  /* another thread's batch first: no page touched */
    hsm_cache_grow(heap, cls);
    if (hsm_transfer_take(heap, cls, 0)) return 1;
  }
  if (atomic_load_explicit(&heap->remote, memory_order_relaxed) != NULL)
    hsm_heap_drain_remote(heap);
  hsm_page_t *pg = page_with_free(heap, cls);
  if (pg == NULL) return 0;
  hsm_cache_grow(heap, cls);
  cache_refill(cache, pg);
  return 1;
}

/* The caller reads the thread's heap again afterwards: a young heap may have swapped
 * itself for an abandoned one here (its classes below HSM_FIXED_CLASSES are the same). */
void *hsm_page_alloc_slow(hsm_heap_t *heap, size_t size, size_t cls, int zero) {
  if (HSM_UNLIKELY(heap->absorb_left != 0) && cls < HSM_FIXED_CLASSES) heap = hsm_heap_absorb(heap);
  if (!hsm_page_fill_cache(heap, cls)) return NULL;
  return hsm_page_pop(heap, &heap->cache[cls], cls, size, zero);
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
  if (HSM_UNLIKELY(b->mark == hsm_block_mark(pg, b))) hsm_double_free(fn, p);
  if (HSM_UNLIKELY(hsm_secure)) { /* the canary behind the request */
    if (__atomic_load_n(&pg->flags.f.is_large, __ATOMIC_RELAXED))
      hsm_secure_unseal_big(fn, p, b, pg->large_request);
    else (void)hsm_secure_unseal(fn, p, b, pg->block_size);
  }
  return b;
}

/* free's slow path (a large block, a secure-mode page, an aligned block's interior, a
 * thread without a heap), after the checks: a small block onto this thread's cache, as
 * free's fast path does; a large block or a secure one onto its own page, or in a batch
 * to its owner (`self` NULL: a thread that has no heap and gets none pushes it alone). */
void hsm_page_free_generic(hsm_heap_t *self, hsm_page_t *pg, void *p) {
  hsm_block_t *b = hsm_checked_block(pg, p, "free");
  b->mark = hsm_block_mark(pg, b); /* on its way to a free list: a second free finds it */
  size_t bin = pg->class_id;
  if (self == NULL) self = hsm_heap_for_free();
  if (self == NULL) {
    atomic_fetch_add_explicit(&hsm_gstats.orphan_frees, 1, memory_order_relaxed);
  } else {
    if (bin == HSM_BIN_LARGE) {
      HSM_COUNT(self->stats.frees[bin], 1);
      HSM_COUNT(self->stats.free_bytes[bin], pg->block_size);
    } else {
      HSM_COUNT(self->cache[bin].frees, 1);
    }
  }
  if (self != NULL && bin != HSM_BIN_LARGE) {
    hsm_page_t *cache = &self->cache[bin];
    if (cache->used <= 1) hsm_cache_overflow(self, pg, b);
    else hsm_cache_push(cache, b);
  } else if (pg->heap == self) {
    if (bin == HSM_BIN_LARGE) hsm_offset_shrink(self); /* before its slices are free */
    hsm_page_free_block(self, pg, b);
  } else {
    if (self != NULL) HSM_COUNT(self->stats.remote_frees, 1);
    hsm_remote_free(self, pg, b);
  }
}

/* Give back the pages of class `cls` with no block out. */
void hsm_heap_free_empty_pages(hsm_heap_t *heap, size_t cls) {
  hsm_page_t *pg = heap->queue[cls].first;
  while (pg != NULL) {
    hsm_page_t *next = pg->next;
    if (pg->used == 0) {
      hsm_queue_remove(&heap->queue[cls], pg);
      if (pg->purging) hsm_purge_leave(heap, pg);
      hsm_page_release(heap, pg);
    }
    pg = next;
  }
}

/* Give back every page with no block out, the pages postponed free kept, and the
 * resident free blocks of the purging classes' reserves (used when a heap is abandoned
 * or collected). */
void hsm_heap_collect_empty(hsm_heap_t *heap) {
  hsm_hot_release_kept(heap);
  heap->idle_pages = 0;
  for (size_t cls = 0; cls < HSM_CLASSES; cls++) {
    hsm_heap_free_empty_pages(heap, cls);
    if (heap->resident_free[cls] != 0) hsm_purge_idle_class(heap, cls); /* the reserve too */
    hsm_page_set_direct(heap, cls);
  }
}
