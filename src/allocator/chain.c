/* Chains: regions, spans and blocks. A region's pages are handed out by a bump;
 * a small class carves its current span by a pointer bump and recycles freed blocks
 * on its own list (the pool of the mesh generators: objects recycled in place, all
 * released at once by a reset); a big block is a span of its own, and freed spans are
 * reused first fit. Callers hold the chain's lock or are its owner (chain_api.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "chain.h"

/* Pages of each class's span: the fewest (up to HSM_CHAIN_SPAN_MAX) whose unused tail
 * is at most 1/8 of the span, and blocks per span. */
size_t hsm_chain_class_size[HSM_CHAIN_CLASSES];
#define class_size hsm_chain_class_size
static uint8_t span_pages[HSM_CHAIN_CLASSES];
static uint16_t span_blocks[HSM_CHAIN_CLASSES];
static pthread_once_t spans_once = PTHREAD_ONCE_INIT;

static void spans_init(void) {
  for (size_t cls = 0; cls < HSM_CHAIN_CLASSES; cls++) {
    class_size[cls] = hsm_class_size[cls];
    size_t b = class_size[cls], k = 1;
    for (; k < HSM_CHAIN_SPAN_MAX; k++) {
      size_t bytes = k * HSM_CHAIN_PAGE, n = bytes / b;
      if (n >= 1 && bytes - n * b <= bytes / 8) break;
    }
    span_pages[cls] = (uint8_t)k;
    span_blocks[cls] = (uint16_t)(k * HSM_CHAIN_PAGE / b);
  }
}

static size_t align_up(size_t n, size_t a) { return (n + a - 1) & ~(a - 1); }

_Static_assert(((sizeof(hsm_cregion_t) + 63) & ~(size_t)63) +
                       ((sizeof(hsmalloc_chain_t) + 63) & ~(size_t)63) + 2 * 64 + HSM_CHAIN_PAGE <=
                   HSMALLOC_CHAIN_MIN_SIZE,
               "the smallest buffer promised in hsmalloc.h holds the bookkeeping and one page");

/* Lay out a region over [lo, lo + size): header (first, so that masking an OS
 * region's pointer finds it), `skip` bytes (the chain struct, in a chain's first
 * region), page maps, pages. NULL when not one page fits. */
static hsm_cregion_t *region_init(uint8_t *lo, size_t size, size_t skip) {
  size_t head = align_up(sizeof(hsm_cregion_t), 64) + align_up(skip, 64);
  if (size < head + 64 + HSM_CHAIN_PAGE) return NULL;
  size_t n = (size - head - 64) / (HSM_CHAIN_PAGE + 2 * sizeof(uint32_t));
  for (; n > 0; n--) /* the maps' rounding may cost a page */
    if (align_up(head + 2 * sizeof(uint32_t) * n, 64) + n * HSM_CHAIN_PAGE <= size) break;
  if (n == 0) return NULL;
  hsm_cregion_t *r = (hsm_cregion_t *)lo;
  memset(r, 0, sizeof *r);
  r->magic = HSM_CHAIN_REGION_MAGIC;
  r->npages = (uint32_t)n;
  r->lo = lo;
  r->hi = lo + size;
  r->head = (uint32_t *)(lo + head);
  r->span = r->head + n;
  r->base = lo + align_up(head + 2 * sizeof(uint32_t) * n, 64);
  r->end = r->base + n * HSM_CHAIN_PAGE;
  return r;
}

static hsmalloc_chain_t *chain_in(hsm_cregion_t *r) {
  return (hsmalloc_chain_t *)((uint8_t *)r + align_up(sizeof(hsm_cregion_t), 64));
}

/* ---- the memory figures, kept as regions come and go and bumps move ---- */

static void committed_peak_update(hsmalloc_chain_t *c) {
  uint64_t now = HSM_READ(c->meta_bytes) + HSM_READ(c->touched_pages) * HSM_CHAIN_PAGE;
  if (now > HSM_READ(c->committed_peak)) HSM_SET(c->committed_peak, now);
}

/* A span of `pages` pages at `first` is handed out: in spans now, and touched up to its
 * end (pages below it in the region may be free spans never touched: an upper bound). */
static void span_counted(hsmalloc_chain_t *c, hsm_cregion_t *r, uint32_t first, uint32_t pages) {
  HSM_COUNT(c->span_pages, pages);
  if (first + pages > r->top) {
    HSM_COUNT(c->touched_pages, first + pages - r->top);
    r->top = first + pages;
    committed_peak_update(c);
  }
}

static void region_counted(hsmalloc_chain_t *c, hsm_cregion_t *r, int64_t sign) {
  HSM_COUNT(c->regions_n, (uint64_t)sign);
  HSM_COUNT(c->reserved_bytes, (uint64_t)(sign * (r->hi - r->lo)));
  HSM_COUNT(c->meta_bytes, (uint64_t)(sign * (r->base - r->lo)));
  if (sign < 0) { HSM_COUNT(c->touched_pages, -(uint64_t)r->top); }
  committed_peak_update(c);
}

int hsm_chain_region_bind(hsmalloc_chain_t *c, hsm_cregion_t *r) {
  uintptr_t lo = ((uintptr_t)r->lo + 4095) & ~(uintptr_t)4095,
            hi = (uintptr_t)r->hi & ~(uintptr_t)4095;
  if (hi <= lo) return 0; /* no whole page of the buffer: nothing of its own to place */
  int rc = hsm_numa_bind_range((void *)lo, hi - lo, c->numa_node, 1);
  if (rc == 0) HSM_COUNT(c->numa_binds, 1);
  else HSM_COUNT(c->numa_bind_failures, 1);
  return rc;
}

static hsm_cregion_t *os_region(hsmalloc_chain_t *c, size_t need_pages, size_t skip) {
  size_t meta = align_up(sizeof(hsm_cregion_t), 64) + align_up(skip, 64) + 128 +
                2 * sizeof(uint32_t) * need_pages;
  size_t bytes = align_up(meta + need_pages * HSM_CHAIN_PAGE, HSM_SEGMENT_SIZE);
  if (c != NULL && c->limit && c->mapped + bytes > c->limit) return NULL;
  uint8_t *lo = hsm_os_map_aligned(bytes, HSM_SEGMENT_SIZE);
  if (lo == NULL) return NULL;
  hsm_cregion_t *r = region_init(lo, bytes, skip);
  r->from_os = 1;
  r->dedicated = bytes > HSM_SEGMENT_SIZE;
  /* One segment: masking finds the header. A mapping made for one big block spans
   * several units, and an aligned pointer into the block may lie past the first: the
   * map knows every unit. */
  if (!r->dedicated) {
    hsm_registry_set(lo, HSM_REG_CHAIN_SEG);
  } else if (hsm_chain_map_add(r) != 0) {
    hsm_os_unmap(lo, bytes);
    return NULL;
  }
  if (c != NULL) {
    c->mapped += bytes;
    if (c->numa_node >= 0) (void)hsm_chain_region_bind(c, r); /* before its pages are touched */
  }
  return r;
}

static void os_unmap(hsm_cregion_t *r) {
  if (r->dedicated) hsm_chain_map_remove(r);
  else hsm_registry_set(r->lo, HSM_REG_NONE);
  hsm_os_unmap(r->lo, (size_t)(r->hi - r->lo));
}

static void region_append(hsmalloc_chain_t *c, hsm_cregion_t *r) {
  r->chain = c;
  region_counted(c, r, 1);
  hsm_cregion_t **at = &c->regions;
  while (*at) at = &(*at)->next;
  *at = r;
}

hsmalloc_chain_t *hsm_chain_new(void *buf, size_t size, unsigned flags, int *err) {
  pthread_once(&spans_once, spans_init);
  hsm_cregion_t *r;
  size_t skip = sizeof(hsmalloc_chain_t);
  if (buf != NULL) {
    r = region_init(buf, size, skip);
    if (r == NULL) {
      *err = ENOSPC;
      return NULL;
    }
  } else {
    size_t limit = size ? align_up(size, HSM_SEGMENT_SIZE) : 0;
    r = os_region(NULL, 1, skip);
    if (r == NULL) {
      *err = ENOMEM;
      return NULL;
    }
    size = (size_t)(r->hi - r->lo);
    if (limit && limit < size) limit = size;
    size = limit;
  }
  hsmalloc_chain_t *c = chain_in(r);
  memset(c, 0, sizeof *c);
  c->flags = flags;
  c->numa_node = -1;
  c->owner = (flags & HSMALLOC_CHAIN_SHARED) ? HSM_CHAIN_SHARED_OWNER : hsm_chain_self();
  pthread_mutex_init(&c->lock, NULL);
  region_append(c, r);
  c->region_now = r;
  if (r->from_os) {
    c->limit = size;
    c->mapped = (size_t)(r->hi - r->lo);
  } else if ((*err = hsm_chain_map_add(r)) != 0) {
    r->magic = 0;
    return NULL;
  }
  c->magic = HSM_CHAIN_MAGIC;
  hsm_chain_live_add(c);
  return c;
}

/* ---- spans ---- */

static void span_set(hsmalloc_chain_t *c, hsm_cregion_t *r, uint32_t first, uint32_t pages,
                     unsigned cls) {
  span_counted(c, r, first, pages);
  uint32_t info = pages << HSM_CSPAN_PAGES_SHIFT | cls;
  for (uint32_t i = 0; i < pages; i++) {
    r->head[first + i] = first;
    r->span[first + i] = info;
  }
}

static void spans_free_push(hsmalloc_chain_t *c, hsm_cregion_t *r, uint32_t first, uint32_t pages) {
  hsm_cfree_t *f = (hsm_cfree_t *)(r->base + (size_t)first * HSM_CHAIN_PAGE);
  f->region = r;
  f->first = first;
  f->pages = pages;
  f->next = c->spans_free;
  c->spans_free = f;
}

/* A run of `pages` pages for class cls: a freed span first (first fit, the rest stays
 * free), then the current region's bump, then the next region (the last one's tail
 * becomes a free span), then a new OS region. */
static uint8_t *span_alloc(hsmalloc_chain_t *c, uint32_t pages, unsigned cls) {
  for (hsm_cfree_t **at = &c->spans_free; *at; at = &(*at)->next) {
    hsm_cfree_t *f = *at;
    if (f->pages < pages) continue;
    hsm_cregion_t *r = f->region;
    uint32_t first = f->first, rest = f->pages - pages;
    *at = f->next;
    if (rest) spans_free_push(c, r, first + pages, rest);
    span_set(c, r, first, pages, cls);
    return r->base + (size_t)first * HSM_CHAIN_PAGE;
  }
  for (hsm_cregion_t *r = c->region_now; r != NULL; r = r->next) {
    if (r->dedicated) continue;
    if (r->npages - r->bump >= pages) {
      c->region_now = r;
      uint32_t first = r->bump;
      r->bump += pages;
      span_set(c, r, first, pages, cls);
      return r->base + (size_t)first * HSM_CHAIN_PAGE;
    }
    if (r->bump < r->npages) spans_free_push(c, r, r->bump, r->npages - r->bump);
    r->bump = r->npages;
  }
  if (!c->regions->from_os) return NULL; /* a caller's buffer is all there is */
  hsm_cregion_t *r = os_region(c, pages, 0);
  if (r == NULL) return NULL;
  region_append(c, r);
  if (!r->dedicated) c->region_now = r;
  r->bump = pages;
  span_set(c, r, 0, pages, cls);
  return r->base;
}

/* A big block's span goes back: to the region's bump when it is the last span cut
 * there, else to the free spans; a dedicated mapping is unmapped. */
static void span_release(hsmalloc_chain_t *c, hsm_cregion_t *r, uint32_t first) {
  uint32_t pages = r->span[first] >> HSM_CSPAN_PAGES_SHIFT;
  HSM_COUNT(c->span_pages, -(uint64_t)pages);
  if (r->dedicated) {
    HSM_COUNT(c->spans, (uint64_t)-1);
    hsm_cregion_t **at = &c->regions;
    while (*at != r) at = &(*at)->next;
    *at = r->next;
    c->mapped -= (size_t)(r->hi - r->lo);
    region_counted(c, r, -1);
    os_unmap(r);
    return;
  }
  HSM_COUNT(c->spans, (uint64_t)-1);
  if (r == c->region_now && first + pages == r->bump) r->bump = first;
  else spans_free_push(c, r, first, pages);
}

/* ---- blocks ---- */

/* p (inside the block it was cut from) is handed out: free must find the block start. */
void hsm_chain_mark_aligned(hsm_cregion_t *r, const void *p) {
  size_t page = (size_t)((const uint8_t *)p - r->base) >> HSM_CHAIN_PAGE_SHIFT;
  uint32_t first = r->head[page], pages = r->span[first] >> HSM_CSPAN_PAGES_SHIFT;
  for (uint32_t i = 0; i < pages; i++) r->span[first + i] |= HSM_CSPAN_ALIGNED;
}

static __attribute__((noinline)) void *alloc_small_slow(hsmalloc_chain_t *c, size_t cls) {
  HSM_COUNT(c->slow, 1);
  if (atomic_load_explicit(&c->remote, memory_order_relaxed) != NULL) {
    hsm_chain_drain(c);
    hsm_block_t *b = c->free[cls];
    if (b != NULL) {
      c->free[cls] = b->next;
      return b;
    }
  }
  uint8_t *s = span_alloc(c, span_pages[cls], (unsigned)cls);
  if (s == NULL) return NULL;
  HSM_COUNT(c->spans, 1);
  size_t bsize = class_size[cls];
  c->cur[cls] = s + bsize;
  c->cur_end[cls] = s + (size_t)span_blocks[cls] * bsize;
  return s;
}

static void *alloc_big(hsmalloc_chain_t *c, size_t size) {
  if (atomic_load_explicit(&c->remote, memory_order_relaxed) != NULL) hsm_chain_drain(c);
  if (size > ((size_t)1 << HSM_ADDRESS_BITS)) return NULL;
  size_t pages = (size + HSM_CHAIN_PAGE - 1) >> HSM_CHAIN_PAGE_SHIFT;
  if (pages > UINT32_MAX >> HSM_CSPAN_PAGES_SHIFT) return NULL;
  uint8_t *p = span_alloc(c, (uint32_t)pages, HSM_CHAIN_BIG);
  if (p == NULL) return NULL;
  HSM_COUNT(c->slow, 1);
  HSM_COUNT(c->spans, 1);
  HSM_COUNT(c->allocs[HSM_CHAIN_BIN_BIG], 1);
  HSM_COUNT(c->big_bytes_out, pages * HSM_CHAIN_PAGE);
  HSM_COUNT(c->allocated, pages * HSM_CHAIN_PAGE);
  HSM_COUNT(c->requested, size);
  return p;
}

void *hsm_chain_alloc(hsmalloc_chain_t *c, size_t size, int packed) {
  if (HSM_UNLIKELY(size > HSM_SMALL_MAX)) return alloc_big(c, size);
  size_t cls = hsm_chain_class_of(size, packed);
  size_t bsize = class_size[cls];
  void *p = c->free[cls];
  if (HSM_LIKELY(p != NULL)) {
    c->free[cls] = ((hsm_block_t *)p)->next;
  } else if (HSM_LIKELY(c->cur[cls] + bsize <= c->cur_end[cls])) {
    p = c->cur[cls];
    c->cur[cls] += bsize;
  } else {
    p = alloc_small_slow(c, cls);
    if (p == NULL) return NULL;
  }
  HSM_COUNT(c->allocs[cls], 1);
  HSM_COUNT(c->requested, size);
  return p;
}

/* The block holding p: its start, its class and its size. */
uint8_t *hsm_chain_block_of(const hsm_cregion_t *r, const void *p, unsigned *cls, size_t *bsize) {
  size_t page = (size_t)((const uint8_t *)p - r->base) >> HSM_CHAIN_PAGE_SHIFT;
  uint32_t first = r->head[page], info = r->span[first];
  uint8_t *span = r->base + (size_t)first * HSM_CHAIN_PAGE;
  *cls = info & 0xFF;
  if (*cls == HSM_CHAIN_BIG) {
    *bsize = (size_t)(info >> HSM_CSPAN_PAGES_SHIFT) * HSM_CHAIN_PAGE;
    return span;
  }
  *bsize = class_size[*cls];
  if (HSM_LIKELY(!(info & HSM_CSPAN_ALIGNED))) return (uint8_t *)p; /* block starts only */
  size_t off = (size_t)((const uint8_t *)p - span);
  return span + off - off % *bsize;
}

size_t hsm_chain_usable(const hsm_cregion_t *r, const void *p) {
  unsigned cls;
  size_t bsize;
  uint8_t *b = hsm_chain_block_of(r, p, &cls, &bsize);
  return (size_t)(b + bsize - (const uint8_t *)p);
}

void hsm_chain_free_block(hsmalloc_chain_t *c, hsm_cregion_t *r, void *p) {
  unsigned cls;
  size_t bsize;
  uint8_t *b = hsm_chain_block_of(r, p, &cls, &bsize);
  if (cls == HSM_CHAIN_BIG) {
    HSM_COUNT(c->frees[HSM_CHAIN_BIN_BIG], 1);
    HSM_COUNT(c->big_bytes_out, -(uint64_t)bsize);
    span_release(c, r, (uint32_t)((b - r->base) >> HSM_CHAIN_PAGE_SHIFT));
    return;
  }
  hsm_block_t *blk = (hsm_block_t *)b;
  blk->next = c->free[cls];
  c->free[cls] = blk;
  HSM_COUNT(c->frees[cls], 1);
}

/* The owner takes back what other threads freed. */
void hsm_chain_drain(hsmalloc_chain_t *c) {
  hsm_block_t *b = atomic_exchange_explicit(&c->remote, NULL, memory_order_acquire);
  if (b == NULL) return;
  HSM_COUNT(c->drains, 1);
  uint64_t n = 0;
  for (; b != NULL; n++) {
    hsm_block_t *next = b->next;
    unsigned prior;
    hsm_cregion_t *r = hsm_chain_region_of(b, hsm_registry_kind(b), &prior);
    if (r != NULL) {
      unsigned cls;
      size_t bsize;
      (void)hsm_chain_block_of(r, b, &cls, &bsize);
      HSM_COUNT(c->rfq_bytes, bsize);
      hsm_chain_free_block(c, r, b);
    }
    b = next;
  }
  HSM_COUNT(c->remote_frees, n);
}

/* Free-all: every block at once. OS regions made for one big block are unmapped,
 * the others kept for reuse. */
void hsm_chain_clear(hsmalloc_chain_t *c) {
  atomic_store_explicit(&c->remote, NULL, memory_order_relaxed);
  memset(c->free, 0, sizeof c->free);
  memset(c->cur, 0, sizeof c->cur);
  memset(c->cur_end, 0, sizeof c->cur_end);
  c->spans_free = NULL;
  hsm_cregion_t **at = &c->regions;
  while (*at) {
    hsm_cregion_t *r = *at;
    if (r->dedicated) {
      *at = r->next;
      c->mapped -= (size_t)(r->hi - r->lo);
      region_counted(c, r, -1);
      os_unmap(r);
      continue;
    }
    r->bump = 0;
    at = &r->next;
  }
  c->region_now = c->regions;
  for (size_t b = 0; b < HSM_CHAIN_BINS; b++) HSM_SET(c->frees[b], HSM_READ(c->allocs[b]));
  HSM_SET(c->big_bytes_out, 0);
  HSM_SET(c->spans, 0);
  HSM_SET(c->span_pages, 0);
}

/* Destroy: unregister and unmap; the first region (holding the chain) last. */
void hsm_chain_release(hsmalloc_chain_t *c) {
  hsm_cregion_t *first = c->regions;
  hsm_chain_live_remove(c); /* out of the dumps before anything goes */
  c->magic = 0;
  c->owner = 0; /* a later call on a chain left in a caller's buffer is caught */
  for (hsm_cregion_t *r = first->next, *next; r != NULL; r = next) {
    next = r->next;
    os_unmap(r);
  }
  pthread_mutex_destroy(&c->lock);
  first->magic = 0;
  if (first->from_os) os_unmap(first);
  else hsm_chain_map_remove(first);
}

void hsm_chain_fill_stats(hsmalloc_chain_t *c, hsmalloc_stats_t *st) {
  memset(st, 0, sizeof *st);
  uint64_t small_live_bytes = 0;
  for (size_t b = 0; b < HSM_CHAIN_BINS; b++) {
    size_t row = b == HSM_CHAIN_BIN_BIG ? HSM_FIXED_CLASSES : b;
    uint64_t allocs = HSM_READ(c->allocs[b]), frees = HSM_READ(c->frees[b]);
    uint64_t live = allocs >= frees ? allocs - frees : 0;
    hsmalloc_bin_stats_t *bin = &st->bins[row];
    bin->size = row < HSM_FIXED_CLASSES ? hsm_class_size[row] : 0;
    bin->allocs += allocs;
    bin->frees += frees;
    bin->live += live;
    st->allocs += allocs;
    st->frees += frees;
    if (b < HSM_CHAIN_CLASSES) {
      small_live_bytes += live * class_size[b];
      st->allocated_total += allocs * class_size[b];
    }
  }
  st->requested_total = HSM_READ(c->requested);
  st->allocated_total += HSM_READ(c->allocated);
  st->allocated_now = small_live_bytes + HSM_READ(c->big_bytes_out);
  st->fragmentation =
      st->requested_total ? (double)st->allocated_total / (double)st->requested_total : 1.0;
  st->slow_allocs = HSM_READ(c->slow);
  st->fast_path_hit_rate = st->allocs ? 1.0 - (double)st->slow_allocs / (double)st->allocs : 1.0;
  if (st->fast_path_hit_rate < 0) st->fast_path_hit_rate = 0;
  st->remote_frees = HSM_READ(c->remote_frees);
  st->queue_drains = HSM_READ(c->drains);
  /* memory (docs/hsmalloc.md, "Chains in the statistics"): a chain returns nothing to
   * the OS before reset or destroy, so what it touched stays committed */
  st->segments = HSM_READ(c->regions_n);
  st->reserved = HSM_READ(c->reserved_bytes);
  st->metadata_bytes = HSM_READ(c->meta_bytes);
  st->page_bytes = HSM_READ(c->span_pages) * HSM_CHAIN_PAGE;
  uint64_t touched = HSM_READ(c->touched_pages) * HSM_CHAIN_PAGE;
  st->committed = st->metadata_bytes + touched;
  st->segments_peak = st->segments;
  st->reserved_peak = st->reserved;
  st->committed_peak = HSM_READ(c->committed_peak);
  if (st->committed_peak < st->committed) st->committed_peak = st->committed;
  st->page_bytes_peak = st->page_bytes;
  st->real_bytes = st->committed;
  st->virtual_bytes = st->reserved;
  st->free_in_pages = st->page_bytes > st->allocated_now ? st->page_bytes - st->allocated_now : 0;
  st->free_not_returned = touched > st->page_bytes ? touched - st->page_bytes : 0;
  st->overhead_bytes = st->metadata_bytes + st->free_in_pages + st->free_not_returned;
  st->reallocs = HSM_READ(c->reallocs);
  st->rfq_blocks = st->drained_blocks = st->remote_frees;
  st->rfq_bytes = HSM_READ(c->rfq_bytes);
  /* a chain does not follow memory pressure: nothing read, memory kept (decay never) */
  st->decay_ms_now = -1;
  st->headroom_permille = 1000;
  st->psi_some_avg10_x100 = -1;
  st->numa_nodes = (uint32_t)hsm_numa_nodes();
  st->numa_placing = c->numa_node >= 0;
  st->numa_node = c->numa_node;
  st->numa_binds = HSM_READ(c->numa_binds);
  st->numa_bind_failures = HSM_READ(c->numa_bind_failures);
  st->pages = HSM_READ(c->spans);
  st->pages_peak = st->pages;
  st->rest.allocs = st->allocs;
  st->rest.frees = st->frees;
  st->rest.live = st->allocs >= st->frees ? st->allocs - st->frees : 0;
  st->rest.slow_allocs = st->slow_allocs;
  st->rest.fast_path_hit_rate = st->fast_path_hit_rate;
  st->rest.requested_bytes = st->requested_total;
  st->rest.allocated_bytes = st->allocated_total;
  st->rest.fragmentation = st->fragmentation;
}
