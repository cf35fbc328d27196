/* Segments: 2 MiB-aligned mappings cut into 64 KiB slices; a heap takes runs of
 * slices for its pages. Fully free segments go to a global cache, are purged
 * (MADV_DONTNEED over the whole 2 MiB, so a huge page is never split) after the
 * decay delay, and unmapped when the cache is over its limit.
 * Free slices of a live segment are purged after the same delay, unless
 * HSMALLOC_HUGEPAGES=1 asks to keep huge pages whole. The delay follows memory
 * pressure (pressure.c): long while there is room, none when the node or the
 * cgroup runs short, when freed pages and segments are purged as they come back.
 * A new segment is placed on the node of the thread taking it (numa.c), and the
 * cache hands out segments of the taker's node first. */
#include <string.h>

#include "internal.h"

#define HEADER_BYTES ((int64_t)((sizeof(hsm_segment_t) + 4095) & ~(size_t)4095))

typedef struct {
  hsm_segment_t *seg;
  uint64_t since_ms;
  uint32_t touched; /* slices that may be resident */
  uint32_t header;  /* header page may be resident */
  int32_t node;     /* NUMA node it was placed on, -1: none */
  uint32_t bound;
  int64_t offset_bytes; /* purged by hsm_offset_growth (reused: a refault) */
} cache_entry_t;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cache_entry_t cache[HSM_SEGMENT_CACHE_MAX];
static int cache_n;

void hsm_segment_cache_lock(void) { pthread_mutex_lock(&cache_lock); }
void hsm_segment_cache_unlock(void) { pthread_mutex_unlock(&cache_lock); }

static int64_t entry_committed(const cache_entry_t *e) {
  return (e->header ? HEADER_BYTES : 0) +
         (int64_t)hsm_popcount(e->touched) * (int64_t)HSM_SLICE_SIZE;
}

/* The spy's per-heap figures (stats.c): segments, committed and page bytes the heap
 * holds. Only the heap's owner (or the thread tidying an abandoned heap) gets here. */
static void heap_holds(hsm_heap_t *heap, int64_t segs, int64_t committed, int64_t page_bytes) {
  if (heap == NULL) return;
  if (segs) HSM_COUNT(heap->stats.segments, (uint64_t)segs);
  if (committed) HSM_COUNT(heap->stats.committed, (uint64_t)committed);
  if (page_bytes) HSM_COUNT(heap->stats.page_bytes, (uint64_t)page_bytes);
}

static void entry_purge(cache_entry_t *e) {
  int64_t bytes = entry_committed(e);
  if (bytes == 0) return;
  hsm_os_purge(e->seg, HSM_SEGMENT_SIZE);
  hsm_stat_add(&hsm_gstats.committed, NULL, -bytes);
  e->touched = 0;
  e->header = 0;
}

static void entry_unmap(cache_entry_t *e) {
  hsm_stat_add(&hsm_gstats.committed, NULL, -entry_committed(e));
  hsm_registry_set(e->seg, HSM_REG_NONE);
  hsm_os_unmap(e->seg, HSM_SEGMENT_SIZE);
  atomic_fetch_sub_explicit(&hsm_gstats.segments_cached, 1, memory_order_relaxed);
}

/* Give back the slices of `dirty` (free and touched) in runs, one madvise each. */
static void purge_runs(hsm_heap_t *heap, hsm_segment_t *seg, uint32_t dirty) {
  if (dirty == 0) return;
  uint32_t rest = dirty;
  while (rest) {
    int first = __builtin_ctz(rest);
    int len = 0;
    while (first + len < 32 && (rest >> (first + len) & 1u)) len++;
    hsm_os_purge((uint8_t *)seg + (size_t)first * HSM_SLICE_SIZE, (size_t)len * HSM_SLICE_SIZE);
    rest &= ~((len >= 32 ? 0xFFFFFFFFu : ((1u << len) - 1)) << first);
  }
  seg->touched_mask &= ~dirty;
  int64_t bytes = (int64_t)hsm_popcount(dirty) * (int64_t)HSM_SLICE_SIZE;
  hsm_stat_add(&hsm_gstats.committed, NULL, -bytes);
  heap_holds(heap, 0, -bytes, 0);
}

/* A segment for `heap`: from the cache (the newest one of the thread's NUMA node
 * first, then the newest of any node, placed anew) or from the OS. With `below` at
 * most HSM_SLICES, only the cached segment whose resident slices leave the fewest
 * fresh ones (fewer than `below`) for a run of `slices`, or NULL. */
static hsm_segment_t *segment_acquire(hsm_heap_t *heap, unsigned slices, unsigned below) {
  cache_entry_t e = {0};
  int node = hsm_numa_enabled() ? hsm_numa_current_node() : -1;
  pthread_mutex_lock(&cache_lock);
  int at = -1;
  if (below <= HSM_SLICES) {
    unsigned best = below;
    for (int i = cache_n - 1; i >= 0; i--) {
      hsm_run_cost_t c;
      hsm_place_run(hsm_segment_free_all(), cache[i].touched, NULL, slices, &c);
      if (c.fresh < best) {
        best = c.fresh;
        at = i;
      }
    }
    if (at < 0) {
      pthread_mutex_unlock(&cache_lock);
      return NULL;
    }
  }
  if (cache_n > 0) {
    if (at < 0) at = cache_n - 1;
    if (node >= 0 && below > HSM_SLICES)
      for (int i = cache_n - 1; i >= 0; i--)
        if (cache[i].node == node) {
          at = i;
          break;
        }
    e = cache[at];
    memmove(&cache[at], &cache[at + 1], (size_t)(cache_n - 1 - at) * sizeof cache[0]);
    cache_n--;
  }
  pthread_mutex_unlock(&cache_lock);
  hsm_segment_t *seg = e.seg;
  int64_t committed = HEADER_BYTES;
  if (seg != NULL) {
    atomic_fetch_sub_explicit(&hsm_gstats.segments_cached, 1, memory_order_relaxed);
    if (e.offset_bytes) hsm_offset_refault(e.offset_bytes, e.since_ms);
    /* the pages' metadata stays: a page not in use is rejected by free as it stands, and
     * its class tells hsm_segment_page_alloc_class which class carved the slice */
    if (e.header) memset(seg, 0, offsetof(hsm_segment_t, pages) + sizeof seg->pages[0]);
    else hsm_stat_add(&hsm_gstats.committed, &hsm_gstats.committed_peak, HEADER_BYTES);
    committed += (int64_t)hsm_popcount(e.touched) * (int64_t)HSM_SLICE_SIZE;
    if (node >= 0)
      atomic_fetch_add_explicit(
          e.node == node ? &hsm_numa_stats.reused_same_node : &hsm_numa_stats.reused_other_node, 1,
          memory_order_relaxed);
  } else {
    seg = hsm_os_map_aligned(HSM_SEGMENT_SIZE, HSM_SEGMENT_SIZE);
    if (seg == NULL) return NULL;
    hsm_segment_guard(seg); /* secure mode only (check.c) */
    hsm_registry_set(seg, HSM_REG_SEGMENT);
    hsm_stat_add(&hsm_gstats.committed, &hsm_gstats.committed_peak, HEADER_BYTES);
    e.node = -1;
  }
  seg->magic = HSM_SEGMENT_MAGIC;
  seg->free_mask = hsm_segment_free_all();
  seg->touched_mask = e.touched;
  seg->offset_mask = 0;
  /* its resident slices have been idle since it was cached, not since the epoch: the
   * header's reset left 0 here, and the next decay pass purged them all at once */
  seg->dirty_since_ms = e.since_ms;
  /* a stray pointer into a slice no page ever used finds the header's slice entry: a
   * page struct never used, not in use (free rejects it) */
  hsm_page_t **table = hsm_slice_table(seg);
  for (size_t i = 0; i < HSM_SLICES; i++) table[i] = &seg->pages[0];
  seg->heap = heap;
  seg->numa_node = e.node;
  seg->numa_bound = e.bound;
  if (node >= 0 && e.node != node) hsm_segment_bind_node(seg, node);
  HSM_TRACE(e.seg != NULL ? HSM_EV_SEG_REUSE : HSM_EV_SEG_NEW, heap, seg, HSM_SEGMENT_SIZE);
  hsm_stat_add(&hsm_gstats.segments, &hsm_gstats.segments_peak, 1);
  heap_holds(heap, 1, committed, 0);
  return seg;
}

static void segment_link(hsm_heap_t *heap, hsm_segment_t *seg) {
  seg->prev = NULL;
  seg->next = heap->segments;
  if (heap->segments) heap->segments->prev = seg;
  heap->segments = seg;
  seg->in_list = 1;
}

static void segment_unlink(hsm_heap_t *heap, hsm_segment_t *seg) {
  if (seg->prev) seg->prev->next = seg->next;
  else heap->segments = seg->next;
  if (seg->next) seg->next->prev = seg->prev;
  seg->next = seg->prev = NULL;
  seg->in_list = 0;
}

static void segment_release(hsm_heap_t *heap, hsm_segment_t *seg) {
  hsm_stat_add(&hsm_gstats.segments, NULL, -1);
  cache_entry_t e = {seg, hsm_now_ms(), seg->touched_mask, 1, seg->numa_node, seg->numa_bound, 0};
  heap_holds(heap, -1, -entry_committed(&e), 0);
  HSM_TRACE(HSM_EV_SEG_FREE, heap, seg, HSM_SEGMENT_SIZE);
  seg->heap = NULL;
  hsm_pressure_poll();
  if (hsm_purge_at_once()) {
    if (hsm_options.decay_ms != 0 && entry_committed(&e) > 0)
      atomic_fetch_add_explicit(&hsm_pressure.pressure_purges, 1, memory_order_relaxed);
    entry_purge(&e);
  }
  pthread_mutex_lock(&cache_lock);
  long limit = hsm_options.cache_segments;
  if (limit > HSM_SEGMENT_CACHE_MAX) limit = HSM_SEGMENT_CACHE_MAX;
  if (limit <= 0) {
    pthread_mutex_unlock(&cache_lock);
    atomic_fetch_add_explicit(&hsm_gstats.segments_cached, 1, memory_order_relaxed);
    entry_unmap(&e);
    return;
  }
  if (cache_n >= limit) { /* evict the oldest */
    cache_entry_t old = cache[0];
    memmove(&cache[0], &cache[1], (size_t)(cache_n - 1) * sizeof cache[0]);
    cache_n--;
    entry_unmap(&old);
  }
  cache[cache_n++] = e;
  atomic_fetch_add_explicit(&hsm_gstats.segments_cached, 1, memory_order_relaxed);
  pthread_mutex_unlock(&cache_lock);
}

/* Purge cached segments idle for the decay delay; unmap those idle 8 times longer. */
void hsm_segment_cache_decay(uint64_t now, int force) {
  if (hsm_options.decay_ms < 0 && !force) return;
  long decay = force ? 0 : hsm_decay_now();
  uint64_t delay = decay > 0 ? (uint64_t)decay : 0;
  pthread_mutex_lock(&cache_lock);
  int kept = 0;
  for (int i = 0; i < cache_n; i++) {
    cache_entry_t *e = &cache[i];
    uint64_t idle = now >= e->since_ms ? now - e->since_ms : 0;
    if (idle >= delay) entry_purge(e);
    if (force || idle >= HSM_UNMAP_IDLE_MS(delay)) entry_unmap(e);
    else cache[kept++] = *e;
  }
  cache_n = kept;
  pthread_mutex_unlock(&cache_lock);
}

/* Purge the resident cached segments idle since before `idle_before` (ms), oldest
 * first, until `want` bytes went back; returns the bytes purged. They stay cached
 * (mapped, reading as zero), marked as given back to offset growth (a reuse of one
 * tells hsm_offset_growth it was needed). */
int64_t hsm_segment_cache_trim(int64_t want, uint64_t idle_before) {
  int64_t done = 0;
  pthread_mutex_lock(&cache_lock);
  for (int i = 0; i < cache_n && done < want && cache[i].since_ms < idle_before; i++) {
    int64_t bytes = entry_committed(&cache[i]);
    if (bytes == 0) continue;
    entry_purge(&cache[i]);
    cache[i].offset_bytes = bytes;
    done += bytes;
  }
  pthread_mutex_unlock(&cache_lock);
  return done;
}

/* The 4 KiB pages that free slices of the heap's segments may hold resident (as far as
 * their last pages carved: hsm_segment_t.resident), counted up to `enough`. */
uint32_t hsm_segment_free_resident(hsm_heap_t *heap, uint32_t enough) {
  uint32_t pages = 0;
  for (hsm_segment_t *seg = heap->segments; seg != NULL && pages < enough; seg = seg->next)
    for (uint32_t dirty = seg->free_mask & seg->touched_mask; dirty; dirty &= dirty - 1)
      pages += seg->resident[__builtin_ctz(dirty)];
  return pages;
}

/* Purge free touched slices of the heap's segments whose oldest one is idle since
 * before `idle_before` until `want` bytes went back (whole slices, lowest first in each
 * segment); returns the bytes purged. */
static int64_t heap_trim(hsm_heap_t *heap, int64_t want, uint64_t idle_before) {
  int64_t done = 0;
  for (hsm_segment_t *seg = heap->segments; seg != NULL && done < want; seg = seg->next) {
    if (seg->dirty_since_ms >= idle_before) continue;
    uint32_t dirty = seg->free_mask & seg->touched_mask, take = 0;
    while (dirty && done < want) {
      uint32_t bit = dirty & -dirty;
      take |= bit;
      dirty &= ~bit;
      done += (int64_t)HSM_SLICE_SIZE;
    }
    if (take == 0) continue;
    if (seg->offset_mask == 0 || seg->dirty_since_ms < seg->offset_since_ms)
      seg->offset_since_ms = seg->dirty_since_ms;
    purge_runs(heap, seg, take);
    seg->offset_mask |= take;
  }
  return done;
}

/* What hsm_offset_growth gave back, and how much of it was committed again (a
 * refault), both halved every HSM_IDLE_HALF_MS: the recent history of its purges. */
static _Atomic int64_t recent_purged, recent_refaulted;
static _Atomic uint64_t recent_halved_ms;
/* The longest that memory given back here had sat idle when the program needed it
 * again (halved with the figures above): the program's own cycle of freeing and
 * reusing (a round of a solver, a step rebuilding its arrays). Memory idle for less
 * is part of that cycle, and giving it back would only cost its refault. */
static _Atomic uint64_t reuse_ms;

/* (both cold: a refault of memory given back against growth is rare next to the
 * paths that commit memory) */
__attribute__((cold)) void hsm_offset_reused(uint64_t idle_since) {
  uint64_t now = hsm_now_ms(), idle = now > idle_since ? now - idle_since : 0;
  uint64_t seen = atomic_load_explicit(&reuse_ms, memory_order_relaxed);
  while (idle > seen && !atomic_compare_exchange_weak_explicit(
                            &reuse_ms, &seen, idle, memory_order_relaxed, memory_order_relaxed)) {}
}

__attribute__((cold)) void hsm_offset_refault(int64_t bytes, uint64_t idle_since) {
  atomic_fetch_add_explicit(&recent_refaulted, bytes, memory_order_relaxed);
  atomic_fetch_add_explicit(&hsm_gstats.growth_refaulted_bytes, bytes, memory_order_relaxed);
  hsm_offset_reused(idle_since);
}

/* `bytes` of fresh memory (never touched, or purged since) are being committed for
 * `heap` (NULL: a huge mapping of a thread without a heap). The resident set is not
 * to grow while memory the program freed sits resident and idle beyond a budget:
 * free slices too short for the request, cached empty segments, cached huge mappings
 * of other sizes. As much of the excess as was committed goes back now (huge mappings
 * first, then cached segments, then the heap's free slices, which it is the most
 * likely to reuse soon), whatever the decay delay says. A program that reuses what it
 * frees commits nothing fresh and never gets here; one that grows while its free
 * memory does not fit its requests (a vector growing by copies, blocks of ever larger
 * sizes) keeps its resident set near what it holds instead of what it held.
 * The budget: max(HSM_IDLE_MIN, in use / HSM_IDLE_SHARE); and when most of what was
 * given back here lately was committed again (HSM_IDLE_REFAULT_PCT), that much more:
 * a program that churns through more idle memory than the budget (blocks of random
 * sizes fragmenting segments) would otherwise pay a purge and its page faults again
 * and again for memory it keeps reusing. `bytes` < 0 (hsm_offset_shrink): a large block
 * of `heap` is going back to its segment, and the heap's resident free slices beyond
 * the budget go back (its own: cached segments and huge pieces keep their bounds).
 * Memory of the growing kind (`huge`: a huge block's pages; else, a shrink's too, a
 * segment's slices) idle for less than the program's cycle (reuse_ms) stays: the
 * next round takes it again for the same kind of request (a list of pointers rebuilt
 * every step: its blocks below 2 MiB, freed every step, were purged as the small
 * blocks grew and faulted in again). Memory of the other kind goes however fresh: it serves none of
 * this growth, and kept it raises the peak (a series of blocks grown by copies: the
 * first ones' slices beside the huge blocks after them). */
void hsm_offset_growth(hsm_heap_t *heap, int64_t bytes, int huge) {
  if (hsm_options.decay_ms <= 0) return; /* never returned, or returned at once */
#define G(x) atomic_load_explicit(&hsm_gstats.x, memory_order_relaxed)
  int64_t used = G(page_bytes) + G(huge_bytes), shrink = bytes < 0;
  /* resident but in no page or huge block (bytes is committed already, and not yet
   * counted in use) */
  int64_t idle =
      shrink ? (int64_t)hsm_segment_free_resident(heap, UINT32_MAX) * 4096
             : G(committed) - used - (G(segments) + G(segments_cached)) * HEADER_BYTES - bytes;
#undef G
  int64_t budget = used / HSM_IDLE_SHARE;
  if (budget < (int64_t)HSM_IDLE_MIN) budget = (int64_t)HSM_IDLE_MIN;
  if (idle <= budget) return;
  uint64_t now = hsm_now_ms();
  uint64_t halved = atomic_load_explicit(&recent_halved_ms, memory_order_relaxed);
  int64_t purged = atomic_load_explicit(&recent_purged, memory_order_relaxed);
  int64_t refaulted = atomic_load_explicit(&recent_refaulted, memory_order_relaxed);
  if (now - halved >= HSM_IDLE_HALF_MS &&
      atomic_compare_exchange_strong_explicit(&recent_halved_ms, &halved, now, memory_order_relaxed,
                                              memory_order_relaxed)) {
    atomic_fetch_sub_explicit(&recent_purged, purged / 2, memory_order_relaxed);
    atomic_fetch_sub_explicit(&recent_refaulted, refaulted / 2, memory_order_relaxed);
    atomic_store_explicit(&reuse_ms, atomic_load_explicit(&reuse_ms, memory_order_relaxed) / 2,
                          memory_order_relaxed);
  }
  if (refaulted * 100 >= purged * HSM_IDLE_REFAULT_PCT) budget += refaulted;
  if (idle <= budget) return;
  if (shrink || bytes > idle - budget) bytes = idle - budget;
  uint64_t cycle = atomic_load_explicit(&reuse_ms, memory_order_relaxed);
  /* idle longer than the cycle (all, before any reuse was seen); of the other kind, any */
  uint64_t before = cycle == 0 ? UINT64_MAX : now > cycle ? now - cycle : 0;
  uint64_t hb = huge ? before : UINT64_MAX, sb = huge ? UINT64_MAX : before;
  int64_t done = shrink ? 0 : hsm_huge_cache_trim(bytes, hb);
  if (done < bytes && !shrink) done += hsm_segment_cache_trim(bytes - done, sb);
  if (done < bytes && heap != NULL && !hsm_options.hugepages)
    done += heap_trim(heap, bytes - done, sb);
  if (done > 0) {
    atomic_fetch_add_explicit(&recent_purged, done, memory_order_relaxed);
    atomic_fetch_add_explicit(&hsm_gstats.growth_purges, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&hsm_gstats.growth_purged_bytes, done, memory_order_relaxed);
  }
}

/* The slices of `run` taken into use: those never touched before are committed memory
 * from now on (counted, and offset by purging idle memory: hsm_offset_growth; a slice
 * purged for that and touched again is a refault). Returns the fresh ones. */
static uint32_t touch_slices(hsm_heap_t *heap, hsm_segment_t *seg, uint32_t run) {
  uint32_t fresh = run & ~seg->touched_mask;
  seg->touched_mask |= run;
  for (uint32_t f = fresh; f; f &= f - 1) seg->resident[__builtin_ctz(f)] = 0;
  if (fresh) {
    int64_t bytes = (int64_t)hsm_popcount(fresh) * (int64_t)HSM_SLICE_SIZE;
    hsm_stat_add(&hsm_gstats.committed, &hsm_gstats.committed_peak, bytes);
    if (fresh & seg->offset_mask)
      hsm_offset_refault((int64_t)hsm_popcount(fresh & seg->offset_mask) * (int64_t)HSM_SLICE_SIZE,
                         seg->offset_since_ms);
    seg->offset_mask &= ~fresh;
    hsm_offset_growth(heap, bytes, 0);
  }
  return fresh;
}

/* A free, resident run of `slices` slices whose last page served class `cls` (a page's
 * metadata stays as it was when it went back): in the heap's segments, or -1. A class's
 * new page goes back where its last one was, so the 4 KiB pages that one carved serve
 * it again. Anywhere else it would carve into the slice's untouched 4 KiB pages while
 * its old slice's stay resident for a class that needs fewer: a thread that takes its
 * classes' pages in another order than the heap's last thread (thread exit gives every
 * empty page back) would leave every slice resident up to the most any class carved
 * there (thread-churn: 1.25 MiB of 4 KiB pages per heap, 0.5 MiB with this). */
static int find_class_run(hsm_heap_t *heap, size_t cls, size_t slices, hsm_segment_t **segp) {
  uint32_t want = (slices >= 32 ? 0xFFFFFFFFu : (1u << slices) - 1);
  for (hsm_segment_t *s = heap->segments; s != NULL; s = s->next) {
    uint32_t cand = s->free_mask & s->touched_mask;
    while (cand) {
      unsigned i = (unsigned)__builtin_ctz(cand);
      cand &= cand - 1;
      const hsm_page_t *old = &s->pages[i];
      if (old->class_id != cls || old->slice_count != slices || old->flags.f.is_large ||
          old->block_size != hsm_class_size[cls] || i + slices > HSM_SLICES ||
          ((s->free_mask & s->touched_mask) >> i & want) != want)
        continue;
      *segp = s;
      return (int)i;
    }
  }
  return -1;
}

static hsm_page_t *page_alloc(hsm_heap_t *heap, size_t slices, size_t cls);

hsm_page_t *hsm_segment_page_alloc(hsm_heap_t *heap, size_t slices) {
  return page_alloc(heap, slices, HSM_BIN_LARGE);
}
/* A page for small class cls: its last page's slices when they are free and resident. */
hsm_page_t *hsm_segment_page_alloc_class(hsm_heap_t *heap, size_t cls) {
  if (cls >= HSM_IDLE_CLASS_FIRST && cls < HSM_FIXED_CLASSES) hsm_purge_page_made(heap, cls);
  return page_alloc(heap, hsm_class_slices[cls], cls);
}

static hsm_page_t *page_alloc(hsm_heap_t *heap, size_t slices, size_t cls) {
  hsm_segment_t *seg = NULL;
  int first = -1;
  hsm_run_cost_t best = {33, 0, 33};
  /* a large block's slices are placed as before (its page's extent is counted whole, an
   * upper bound: how much of a block the program wrote is not known) */
  int large = cls == HSM_BIN_LARGE;
  int own = !large && (first = find_class_run(heap, cls, slices, &seg)) >= 0;
  if (own) goto take;
again:
  for (hsm_segment_t *s = heap->segments; s != NULL; s = s->next) {
    hsm_run_cost_t c;
    int at = hsm_place_run(s->free_mask, s->touched_mask, large ? NULL : s->resident,
                           (unsigned)slices, &c);
    if (at >= 0 && hsm_place_better(&c, &best)) {
      seg = s;
      first = at;
      best = c;
      if (c.fresh == 0 && c.len == slices && (large || c.res == slices * HSM_SLICE_PAGES)) break;
    }
  }
  /* A fully free segment sits resident in the cache while the heap's own room would
   * commit fresh slices for a large block (realloc-large: 5.8 MiB of cached segments
   * idle at the peak): take the cached one whose resident slices save the most. Not
   * for a small class's page, which commits its 4 KiB pages only as it carves them:
   * taking a cached segment for it would take an exited thread's segment from the next
   * thread, which then faults in a fresh one (tests/allocator/churn_pages.c). */
  if (seg != NULL && best.fresh > 0 && cls == HSM_BIN_LARGE) {
    hsm_segment_t *cached = segment_acquire(heap, (unsigned)slices, best.fresh);
    if (cached != NULL) {
      seg = cached;
      segment_link(heap, seg);
      hsm_run_cost_t c;
      first = hsm_place_run(seg->free_mask, seg->touched_mask, NULL, (unsigned)slices, &c);
    }
  }
  if (seg == NULL) {
    /* memory pressure: the pages postponed free kept go back before a new segment */
    if (hsm_hot_release_kept(heap) > 0) goto again;
    hsm_collect_abandoned(0);
    seg = segment_acquire(heap, (unsigned)slices, HSM_SLICES + 1);
    if (seg == NULL) return NULL;
    segment_link(heap, seg);
    hsm_run_cost_t c;
    /* (a cached segment keeps its pages' classes) */
    if (cls == HSM_BIN_LARGE || (first = find_class_run(heap, cls, slices, &seg)) < 0)
      first = hsm_place_run(seg->free_mask, seg->touched_mask, large ? NULL : seg->resident,
                            (unsigned)slices, &c);
  }
take:;
  uint32_t run = (slices >= 32 ? 0xFFFFFFFFu : ((1u << slices) - 1)) << first;
  seg->free_mask &= ~run;
  if (seg->free_mask == 0) segment_unlink(heap, seg);
  for (size_t i = 0; i < slices; i++) hsm_slice_table(seg)[first + i] = &seg->pages[first];
  uint32_t fresh = touch_slices(heap, seg, run);
  if (cls >= HSM_IDLE_CLASS_FIRST && cls < HSM_FIXED_CLASSES && !own && (run & ~fresh))
    hsm_purge_page_placed(seg, first, cls, run & ~fresh);
  heap_holds(heap, 0, (int64_t)hsm_popcount(fresh) * (int64_t)HSM_SLICE_SIZE,
             (int64_t)slices * (int64_t)HSM_SLICE_SIZE);
  hsm_page_t *pg = &seg->pages[first];
  memset(pg, 0, sizeof *pg);
  pg->slice_count = (uint8_t)slices;
  pg->span_zero = fresh == run;
  pg->start = (uint8_t *)seg + (size_t)first * HSM_SLICE_SIZE;
  pg->heap = heap;
  pg->in_use = 1;
  hsm_stat_add(&hsm_gstats.pages, &hsm_gstats.pages_peak, 1);
  HSM_TRACE(HSM_EV_PAGE_NEW, heap, pg->start, slices * HSM_SLICE_SIZE);
  hsm_stat_add(&hsm_gstats.page_bytes, &hsm_gstats.page_bytes_peak,
               (int64_t)slices * (int64_t)HSM_SLICE_SIZE);
  return pg;
}

void hsm_segment_page_free(hsm_heap_t *heap, hsm_page_t *pg) {
  hsm_segment_t *seg = hsm_segment_of(pg);
  size_t first = (size_t)(pg - seg->pages);
  uint32_t run = (pg->slice_count >= 32 ? 0xFFFFFFFFu : ((1u << pg->slice_count) - 1)) << first;
  hsm_stat_add(&hsm_gstats.pages, NULL, -1);
  hsm_stat_add(&hsm_gstats.page_bytes, NULL, -(int64_t)pg->slice_count * (int64_t)HSM_SLICE_SIZE);
  heap_holds(heap, 0, 0, -(int64_t)pg->slice_count * (int64_t)HSM_SLICE_SIZE);
  HSM_TRACE(HSM_EV_PAGE_FREE, heap, pg->start, (uint64_t)pg->slice_count * HSM_SLICE_SIZE);
  pg->in_use = 0;
  int give_back = hsm_purge_page_gone(heap, pg); /* (reads the secure flag) */
  /* a secure page's flag says also that it is in use (free.c's free_rejected tests
   * the flags alone): a free of one of its blocks now takes the generic path */
  __atomic_store_n(&pg->flags.f.secure, 0, __ATOMIC_RELAXED);
  hsm_place_note_resident(seg, pg, first);
  if ((seg->free_mask & seg->touched_mask) == 0) seg->dirty_since_ms = hsm_now_ms();
  seg->free_mask |= run;
  if (give_back) purge_runs(heap, seg, run & seg->touched_mask);
  if (seg->free_mask == hsm_segment_free_all()) {
    if (seg->in_list) segment_unlink(heap, seg);
    segment_release(heap, seg);
    return;
  }
  if (!seg->in_list) segment_link(heap, seg);
  /* Under pressure the page's slices go back now, not at the owner's next maintenance
   * (a phase that only frees never reaches one). The level is looked at every time,
   * refreshed every 16th page (a clock read and the estimate: ~4% of the instructions
   * of a workload that frees pages all the time, when done at each one). */
  static __thread uint32_t page_frees __attribute__((tls_model("initial-exec")));
  if ((++page_frees & 15) == 0) hsm_pressure_poll();
  uint32_t dirty = run & seg->touched_mask;
  if (dirty && !hsm_options.hugepages && hsm_purge_at_once()) {
    if (hsm_options.decay_ms != 0)
      atomic_fetch_add_explicit(&hsm_pressure.pressure_purges, 1, memory_order_relaxed);
    purge_runs(heap, seg, dirty);
  }
}

/* Purge the touched free slices of the heap's segments once they have been free for
 * the decay delay, or all of them with `force` (runs of slices, one madvise each). */
void hsm_segment_decay_slices(hsm_heap_t *heap, uint64_t now, int force) {
  if (hsm_options.hugepages || (hsm_options.decay_ms < 0 && !force)) return;
  uint64_t decay = 0;
  if (!force) {
    long d = hsm_decay_now();
    decay = d > 0 ? (uint64_t)d : 0;
  }
  for (hsm_segment_t *seg = heap->segments; seg != NULL; seg = seg->next) {
    uint32_t dirty = seg->free_mask & seg->touched_mask;
    if (dirty == 0 || (now >= seg->dirty_since_ms && now - seg->dirty_since_ms < decay)) continue;
    purge_runs(heap, seg, dirty);
  }
}

/* The owner's maintenance: pressure is read, and a SIGUSR2 dump the handler could not
 * write is written, off the fast path; then its free slices decay. */
void hsm_segment_decay(hsm_heap_t *heap, uint64_t now) {
  hsm_pressure_poll();
  hsm_stats_signal_pending();
  hsm_segment_decay_slices(heap, now, 0);
}

/* Resize a large page in place to `slices` slices: grow into the free slices that
 * follow it, or free its tail. Returns 0 when the slices after it are taken. */
int hsm_segment_page_resize(hsm_heap_t *heap, hsm_page_t *pg, size_t slices) {
  hsm_segment_t *seg = hsm_segment_of(pg);
  size_t first = (size_t)(pg - seg->pages), old = pg->slice_count;
  if (slices == old) return 1;
  if (slices == 0 || first + slices > HSM_SLICES) return 0;
  int64_t delta = ((int64_t)slices - (int64_t)old) * (int64_t)HSM_SLICE_SIZE;
  if (slices > old) {
    uint32_t extra = (uint32_t)(((1ull << (slices - old)) - 1) << (first + old));
    if ((seg->free_mask & extra) != extra) return 0;
    seg->free_mask &= ~extra;
    if (seg->free_mask == 0 && seg->in_list) segment_unlink(heap, seg);
    for (size_t i = first + old; i < first + slices; i++) hsm_slice_table(seg)[i] = pg;
    uint32_t fresh = touch_slices(heap, seg, extra);
    hsm_stat_add(&hsm_gstats.page_bytes, &hsm_gstats.page_bytes_peak, delta);
    heap_holds(heap, 0, (int64_t)hsm_popcount(fresh) * (int64_t)HSM_SLICE_SIZE, delta);
  } else {
    uint32_t tail = (uint32_t)(((1ull << (old - slices)) - 1) << (first + slices));
    for (size_t i = first + slices; i < first + old; i++) seg->resident[i] = HSM_SLICE_PAGES;
    if ((seg->free_mask & seg->touched_mask) == 0) seg->dirty_since_ms = hsm_now_ms();
    seg->free_mask |= tail;
    if (!seg->in_list) segment_link(heap, seg);
    hsm_stat_add(&hsm_gstats.page_bytes, NULL, delta);
    heap_holds(heap, 0, 0, delta);
  }
  pg->slice_count = (uint8_t)slices;
  pg->block_size = slices * HSM_SLICE_SIZE;
  return 1;
}

/* Grow a large page whose following slices are too few by moving it down into the
 * free slices just before it (the following free ones are taken first): the block is
 * copied within its own neighbourhood instead of to a run elsewhere, so realloc holds
 * no second copy and leaves no hole. Returns the new start, or NULL. */
void *hsm_segment_page_slide(hsm_heap_t *heap, hsm_page_t *pg, size_t slices) {
  hsm_segment_t *seg = hsm_segment_of(pg);
  size_t first = (size_t)(pg - seg->pages), old = pg->slice_count;
  if (slices <= old || slices >= HSM_SLICES) return NULL;
  size_t after = 0, before = 0;
  while (first + old + after < HSM_SLICES && (seg->free_mask >> (first + old + after) & 1u))
    after++;
  while (before < first && (seg->free_mask >> (first - before - 1) & 1u)) before++;
  size_t need = slices - old, down = after >= need ? 0 : need - after;
  if (down == 0 || down > before) return NULL;
  size_t to = first - down;
  uint32_t run = (uint32_t)(((1ull << slices) - 1) << to);
  uint32_t extra = run & ~(uint32_t)(((1ull << old) - 1) << first);
  seg->free_mask &= ~extra;
  if (seg->free_mask == 0 && seg->in_list) segment_unlink(heap, seg);
  uint32_t fresh = touch_slices(heap, seg, extra);
  int64_t delta = (int64_t)need * (int64_t)HSM_SLICE_SIZE;
  hsm_stat_add(&hsm_gstats.page_bytes, &hsm_gstats.page_bytes_peak, delta);
  heap_holds(heap, 0, (int64_t)hsm_popcount(fresh) * (int64_t)HSM_SLICE_SIZE, delta);
  uint8_t *start = (uint8_t *)seg + to * HSM_SLICE_SIZE;
  memmove(start, pg->start, pg->block_size);
  hsm_page_t *moved = &seg->pages[to];
  *moved = *pg;
  /* the old descriptor is no page now (as hsm_page_release leaves one) */
  __atomic_store_n(&pg->free_limit, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&pg->in_use, 0, __ATOMIC_RELAXED);
  moved->start = start;
  moved->slice_count = (uint8_t)slices;
  moved->block_size = slices * HSM_SLICE_SIZE;
  for (size_t i = to; i < to + slices; i++) hsm_slice_table(seg)[i] = moved;
  return start;
}
