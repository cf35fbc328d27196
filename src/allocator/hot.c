/* Hot sizes: exact classes for the sizes a thread allocates most, and postponed free
 * of their empty pages (after Li and Altenbek, "Optimized Memory Allocator for
 * Hot-Size Allocations").
 *
 * Detection. A window samples a heap's next HSM_HOT_SAMPLE allocations: meanwhile its
 * fast_direct holds only hsm_page_empty, so malloc's fast path is unchanged and every
 * allocation takes the generic path, which counts the size whose class serves it in
 * 8-byte steps (above HSM_CLASS_TABLE_MAX, up to HSM_HOT_MAX_SIZE: rounded to 16, the
 * first HSM_HOT_BIG_SAMPLES distinct sizes). When the
 * window closes, a class size (hsm_hot_class_size: the request rounded to 8 up to 128
 * bytes with packed classes, to 16 above) whose sizes took at least 1/HSM_HOT_SHARE of
 * them is promoted: it gets a slot (a class after the fixed ones, process-wide, sized
 * once), and the heap's class8 sends the 8-byte steps it covers to that class. The
 * first window opens at the heap's first allocation, later ones every
 * HSMALLOC_HOT_RESAMPLE_MS (looked at on the slow path).
 *
 * Retirement. An installed class whose share stays under half the threshold for
 * HSM_HOT_COLD_WINDOWS windows retires: its sizes go back to their fixed class, its
 * empty pages go back at once, and the pages with live blocks stay until those blocks
 * come back. A page knows its class and block size and a slot never changes size, so
 * free and malloc_usable_size need nothing else. Sizes named by HSMALLOC_HOT_SIZES
 * are installed in every heap from its first allocation and never retire.
 *
 * Postponed free. An empty page of a class installed here stays with the heap (on its
 * kept list, up to HSM_HOT_KEEP_BYTES per class) for the class's next page, instead of
 * going back to its segment and being carved again (the "ping-pong" the paper names).
 * Kept pages go back when the class retires, when the heap would need a new segment
 * (memory pressure), on hsmalloc_collect/malloc_trim and at thread exit.
 */
#include "internal.h"

hsm_hot_slot_t hsm_hot_slots[HSM_HOT_SLOTS];
static pthread_mutex_t hot_lock = PTHREAD_MUTEX_INITIALIZER;

void hsm_hot_lock(void) { pthread_mutex_lock(&hot_lock); }
void hsm_hot_unlock(void) { pthread_mutex_unlock(&hot_lock); }

/* The slot of block size `size`, given one if new; -1 when every slot has another size. */
static int slot_for(size_t size, int seeded) {
  int found = -1;
  pthread_mutex_lock(&hot_lock);
  for (int s = 0; s < HSM_HOT_SLOTS && found < 0; s++) {
    if (hsm_hot_slots[s].size == size) {
      found = s;
    } else if (hsm_hot_slots[s].size == 0) {
      hsm_class_set_size((size_t)HSM_FIXED_CLASSES + (size_t)s, size);
      hsm_hot_slots[s].size = size;
      found = s;
    }
  }
  if (found >= 0 && seeded) hsm_hot_slots[found].seeded = 1;
  pthread_mutex_unlock(&hot_lock);
  return found;
}

/* Serve 8-byte step i (sizes 8i - 7 .. 8i) with class cls; malloc's per-size table
 * follows (with malloc 16-byte aligned, the step below may round into this one). */
static void set_class8(hsm_heap_t *heap, unsigned i, size_t cls) {
  heap->class8[i] = (uint8_t)cls;
  for (size_t size = i > 1 ? i * 8 - 15 : 0; size <= i * 8; size++)
    heap->fast_class[size] = heap->class8[(hsm_malloc_csize(size) + 7) >> 3];
}

static void install(hsm_heap_t *heap, int s) {
  size_t cls = (size_t)HSM_FIXED_CLASSES + (size_t)s;
  heap->hot_on[s] = 1;
  heap->hot_cold[s] = 0;
  heap->hot_count++;
  atomic_fetch_add_explicit(&hsm_hot_slots[s].heaps, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&hsm_hot_slots[s].promotions, 1, memory_order_relaxed);
  if (hsm_class_size[cls] <= HSM_SMALL_MAX)
    heap->hot_fixed_allocs[s] = HSM_READ(heap->stats.allocs[hsm_class_of(hsm_class_size[cls])]);
  if (hsm_class_size[cls] > HSM_CLASS_TABLE_MAX) { /* no 8-byte step: the big list */
    heap->hot_big_key[heap->hot_big_n] = (uint32_t)(hsm_class_size[cls] >> 4);
    heap->hot_big_cls[heap->hot_big_n++] = (uint8_t)cls;
    return;
  }
  for (unsigned i = hsm_class_lo8[cls]; i <= hsm_class_hi8[cls]; i++) set_class8(heap, i, cls);
}

static void release_kept_slot(hsm_heap_t *heap, int s) {
  hsm_page_t *pg;
  while ((pg = heap->kept[s].first) != NULL) {
    hsm_queue_remove(&heap->kept[s], pg);
    pg->kept = 0;
    heap->kept_bytes[s] -= (size_t)pg->slice_count * HSM_SLICE_SIZE;
    HSM_COUNT(heap->stats.kept_pages[s], (uint64_t)-1);
    hsm_page_release(heap, pg);
  }
}

static void retire(hsm_heap_t *heap, int s) {
  size_t cls = (size_t)HSM_FIXED_CLASSES + (size_t)s;
  heap->hot_on[s] = 0;
  heap->hot_count--;
  atomic_fetch_sub_explicit(&hsm_hot_slots[s].heaps, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&hsm_hot_slots[s].retirements, 1, memory_order_relaxed);
  for (unsigned i = hsm_class_lo8[cls]; i <= hsm_class_hi8[cls]; i++)
    set_class8(heap, i, hsm_class_table[i]);
  for (uint32_t i = 0; i < heap->hot_big_n; i++)
    if (heap->hot_big_cls[i] == cls) {
      heap->hot_big_n--;
      heap->hot_big_key[i] = heap->hot_big_key[heap->hot_big_n];
      heap->hot_big_cls[i] = heap->hot_big_cls[heap->hot_big_n];
      break;
    }
  hsm_cache_flush_class(heap, cls);
  release_kept_slot(heap, s);
  hsm_heap_free_empty_pages(heap, cls);
  hsm_direct_set(heap, cls, &hsm_page_empty); /* no 8-byte step points to it any more */
}

/* ---- detection ---- */

static void window_open(hsm_heap_t *heap, uint64_t now) {
  heap->sample_left = HSM_HOT_SAMPLE;
  heap->sample_total = 0;
  memset(heap->sample_count, 0, sizeof heap->sample_count);
  heap->sample_big_n = 0;
  heap->sampled_ms = now;
  hsm_fast_direct_refresh(heap);
}

/* The window's allocations a hot class of block size `size` would have served (its
 * 8-byte steps, or its 16-byte step above the table); `take` clears them, so that the
 * class is counted once. */
static uint32_t served(hsm_heap_t *heap, size_t size, int take) {
  uint32_t n = 0;
  if (size > HSM_CLASS_TABLE_MAX) {
    for (uint32_t i = 0; i < heap->sample_big_n; i++)
      if (heap->sample_big[i] == size) {
        n = heap->sample_big_count[i];
        if (take) heap->sample_big_count[i] = 0;
      }
    return n;
  }
  for (unsigned i = hsm_hot_first_step(size); i <= size / 8; i++) {
    n += heap->sample_count[i];
    if (take) heap->sample_count[i] = 0;
  }
  return n;
}

/* Whether the fixed class serving a request of `size` bytes has blocks of exactly that
 * size (every size up to 128 bytes, 144, 160 .. 256, 4096, 8192 .. 128 KiB): a hot class
 * would fit no request better, only hold a second set of pages beside the fixed
 * class's (glibc-simple's 1600 blocks of 64 bytes: 16 pages of the fixed 64 carved
 * before the window closed, 32 of the hot one). Such sizes are not promoted when
 * detected; a named one is (HSMALLOC_HOT_SIZES: the user asked for its statistics). */
static int fixed_fits(size_t size) {
  if (size > HSM_SMALL_MAX) return 0; /* a large block: no fixed class */
  return hsm_class_size[hsm_class_of(hsm_malloc_csize(size))] == size;
}

static void decide(hsm_heap_t *heap) {
  uint32_t need = heap->sample_total / HSM_HOT_SHARE;
  if (need < 2) need = 2;
  for (int s = 0; s < HSM_HOT_SLOTS; s++) {
    if (!heap->hot_on[s] || heap->hot_pinned[s]) continue;
    /* installed already: counted here, not a candidate below */
    if (served(heap, hsm_hot_slots[s].size, 1) * 2 >= need) heap->hot_cold[s] = 0;
    else if (++heap->hot_cold[s] >= HSM_HOT_COLD_WINDOWS) retire(heap, s);
  }
  while (heap->hot_count < HSM_HOT_PER_HEAP) { /* the hottest first */
    size_t best = 0;
    uint32_t best_n = 0;
    for (size_t size = 16; size <= HSM_CLASS_TABLE_MAX;
         size = hsm_hot_class_size(size + 1, hsm_packed)) {
      uint32_t n = served(heap, size, 0);
      if (n >= need && n > best_n && !fixed_fits(size)) best = size, best_n = n;
    }
    for (uint32_t i = 0; i < heap->sample_big_n; i++)
      if (heap->sample_big_count[i] >= need && heap->sample_big_count[i] > best_n &&
          !fixed_fits(heap->sample_big[i]))
        best = heap->sample_big[i], best_n = heap->sample_big_count[i];
    if (best == 0) break;
    (void)served(heap, best, 1);
    int s = slot_for(best, 0);
    if (s >= 0 && !heap->hot_on[s]) install(heap, s);
  }
}

static void window_close(hsm_heap_t *heap) {
  decide(heap);
  hsm_fast_direct_refresh(heap);
}

/* Called by the generic allocation path while a window is open. Sizes of 8 bytes and
 * less count in the total only (their class, 16 bytes, is as small as any hot class). */
void hsm_hot_sample(hsm_heap_t *heap, size_t size) {
  heap->sample_total++;
  if (size > 8 && size <= HSM_CLASS_TABLE_MAX) {
    uint16_t *count = &heap->sample_count[(size + 7) / 8];
    if (*count < UINT16_MAX) (*count)++;
  } else if (size > HSM_CLASS_TABLE_MAX && size <= HSM_HOT_MAX_SIZE) {
    uint32_t s16 = (uint32_t)hsm_hot_class_size(size, 0), i = 0;
    while (i < heap->sample_big_n && heap->sample_big[i] != s16) i++;
    if (i == heap->sample_big_n && i < HSM_HOT_BIG_SAMPLES) {
      heap->sample_big[heap->sample_big_n++] = s16;
      heap->sample_big_count[i] = 0;
    }
    if (i < heap->sample_big_n) heap->sample_big_count[i]++;
  }
  if (--heap->sample_left == 0) window_close(heap);
}

/* HSMALLOC_HOT_SIZES: installed (pinned) in every heap; a full heap makes room by
 * retiring classes it detected. */
void hsm_hot_apply_seeds(hsm_heap_t *heap) {
  for (int k = 0; k < hsm_options.hot_n; k++) {
    int s = slot_for(hsm_options.hot_sizes[k], 1);
    if (s < 0) continue;
    if (!heap->hot_on[s]) {
      for (int r = 0; r < HSM_HOT_SLOTS && heap->hot_count >= HSM_HOT_PER_HEAP; r++)
        if (heap->hot_on[r] && !heap->hot_pinned[r]) retire(heap, r);
      if (heap->hot_count >= HSM_HOT_PER_HEAP) continue;
      install(heap, s);
    }
    heap->hot_pinned[s] = 1;
  }
}

/* A new heap, or one adopted from an exited thread (which keeps its classes until
 * windows show them cold). */
void hsm_hot_heap_start(hsm_heap_t *heap) {
  hsm_hot_apply_seeds(heap);
  if (hsm_options.hot_detect && heap->sample_left == 0) window_open(heap, hsm_now_ms());
}

void hsm_hot_maintenance(hsm_heap_t *heap, uint64_t now) {
  if (!hsm_options.hot_detect || heap->sample_left != 0 || hsm_options.hot_resample_ms < 0) return;
  if (now - heap->sampled_ms >= (uint64_t)hsm_options.hot_resample_ms) window_open(heap, now);
}

/* Whether fixed class cls is one a hot class installed here took over (it served the
 * hot class's size before) and has allocated nothing since: its blocks are the
 * program's first ones of that size, made while the window sampled, and as they are
 * freed its emptied pages will not be carved for them again (purge.c). */
int hsm_hot_superseded(const hsm_heap_t *heap, size_t cls) {
  for (int s = 0; s < HSM_HOT_SLOTS; s++) {
    size_t size = hsm_hot_slots[s].size;
    if (heap->hot_on[s] && size <= HSM_SMALL_MAX && hsm_class_of(size) == cls &&
        HSM_READ(heap->stats.allocs[cls]) == heap->hot_fixed_allocs[s])
      return 1;
  }
  return 0;
}

/* ---- postponed free ---- */

/* pg (of hot class, on its queue) has just become empty: keep it if the class is
 * installed here and its kept pages stay within the bound (one page of any size). */
int hsm_hot_keep(hsm_heap_t *heap, hsm_page_t *pg) {
  size_t cls = pg->class_id;
  int s = (int)(cls - HSM_FIXED_CLASSES);
  size_t bytes = (size_t)pg->slice_count * HSM_SLICE_SIZE;
  if (!heap->hot_on[s] ||
      (heap->kept_bytes[s] > 0 && heap->kept_bytes[s] + bytes > HSM_HOT_KEEP_BYTES))
    return 0;
  hsm_queue_remove(&heap->queue[cls], pg);
  hsm_queue_push_front(&heap->kept[s], pg);
  pg->kept = 1;
  heap->kept_bytes[s] += bytes;
  HSM_COUNT(heap->stats.kept_pages[s], 1);
  return 1;
}

/* A kept page of class cls, back on the class's queue, or NULL. */
hsm_page_t *hsm_hot_take_kept(hsm_heap_t *heap, size_t cls) {
  int s = (int)(cls - HSM_FIXED_CLASSES);
  hsm_page_t *pg = heap->kept[s].first;
  if (pg == NULL) return NULL;
  hsm_queue_remove(&heap->kept[s], pg);
  pg->kept = 0;
  heap->kept_bytes[s] -= (size_t)pg->slice_count * HSM_SLICE_SIZE;
  HSM_COUNT(heap->stats.kept_pages[s], (uint64_t)-1);
  hsm_queue_push_front(&heap->queue[cls], pg);
  return pg;
}

/* Give every kept page back to its segment; returns the bytes given. */
size_t hsm_hot_release_kept(hsm_heap_t *heap) {
  size_t bytes = 0;
  for (int s = 0; s < HSM_HOT_SLOTS; s++) {
    bytes += heap->kept_bytes[s];
    if (heap->kept[s].first != NULL) release_kept_slot(heap, s);
  }
  return bytes;
}
