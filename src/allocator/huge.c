/* Huge blocks (above HSM_LARGE_MAX): one mapping each, its header in the first page.
 * The block starts in the mapping's first 2 MiB unit, so masking finds the header;
 * for alignments of 2 MiB and more the header sits in the unit just before the
 * block and the registry says so (HSM_REG_HUGE_PREV).
 *
 * Mappings start on 2 MiB and end on the block's last page. A freed one goes to a cache
 * of resident *pieces*, and a new huge block is made of resident pieces before any
 * fresh page is faulted in:
 *   - best fit: the smallest piece at least as big that starts on 2 MiB (the header's
 *     unit) serves it; what is left beyond the block's last page stays a piece of its
 *     own (a split of bookkeeping only);
 *   - gathering: when no such piece is big enough, a region of the block's size is
 *     mapped and the newest resident pieces are moved into it with mremap
 *     (MREMAP_FIXED): the kernel moves their page tables (whole PMD entries where a
 *     piece is 2 MiB-aligned), nothing is copied or faulted; only what the cache lacks
 *     is fresh.
 * The cache keeps resident pieces up to max(HSM_HUGE_KEEP, half the huge bytes in use) (a
 * quarter of that under some memory pressure, none under high pressure: purged as they
 * are freed), purges a piece
 * idle for the decay delay and unmaps it once idle 8 times that (HSM_UNMAP_IDLE_MS).
 * Adjacent pieces (a split's parts given back) are joined. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>

#include "internal.h"

typedef struct {
  uint8_t *base; /* page-aligned (a block's mapping starts on 2 MiB) */
  size_t size;   /* whole pages */
  uint64_t since_ms;
  uint64_t seq; /* the order pieces were freed in */
  int purged;   /* 0: resident (as far as the blocks it served were touched); 1: purged by
               * the decay or pressure, 2: by hsm_offset_growth (reused: a refault) */
} piece_t;

static pthread_mutex_t huge_lock = PTHREAD_MUTEX_INITIALIZER;
static piece_t cache[HSM_HUGE_CACHE];
static int cache_n;
static size_t cache_resident; /* bytes of the pieces not purged */
static uint64_t cache_seq;
/* Bytes the cache purged against growth (hsm_huge_cache_trim) and needed again since
 * (a purged piece taken, or fresh pages faulted in while such pieces sat unused),
 * halved every HSM_IDLE_HALF_MS; under the lock. */
static int64_t trim_refaulted;
static uint64_t trim_halved_ms;
/* Huge blocks made so far; the biggest mapping freed so far (under the lock). */
static _Atomic uint64_t huge_made;
static size_t freed_max;

void hsm_huge_cache_lock(void) { pthread_mutex_lock(&huge_lock); }
void hsm_huge_cache_unlock(void) { pthread_mutex_unlock(&huge_lock); }

static size_t round_page(size_t n) { return (n + 4095) & ~(size_t)4095; }

/* The resident bytes the cache may keep at the present memory pressure. */
static size_t keep_bound(void) {
  if (hsm_purge_at_once()) return 0;
  int64_t live = atomic_load_explicit(&hsm_gstats.huge_bytes, memory_order_relaxed);
  size_t bound = (size_t)(live > 0 ? live : 0) / HSM_HUGE_KEEP_SHARE;
  if (bound < HSM_HUGE_KEEP) bound = HSM_HUGE_KEEP;
  int level = atomic_load_explicit(&hsm_pressure.level, memory_order_relaxed);
  return level >= HSM_PRESSURE_SOME && hsm_options.pressure ? bound / 4 : bound;
}

static void piece_purge(piece_t *e, int why) {
  if (e->purged) return;
  hsm_os_purge(e->base, e->size);
  hsm_stat_add(&hsm_gstats.committed, NULL, -(int64_t)e->size);
  cache_resident -= e->size;
  e->purged = why;
}

/* Remove piece i (under the lock). */
static piece_t take(int i) {
  piece_t e = cache[i];
  cache[i] = cache[--cache_n];
  if (!e.purged) cache_resident -= e.size;
  return e;
}

static void piece_unmap(const piece_t *e) {
  if (!e->purged) hsm_stat_add(&hsm_gstats.committed, NULL, -(int64_t)e->size);
  hsm_os_unmap(e->base, e->size);
}

/* Add a piece (under the lock), joined with an adjacent one in the same state; pieces
 * beyond the count or the resident bound are returned in `out` (oldest first) for the
 * caller to unmap outside the lock. Returns how many. */
static int insert(piece_t e, piece_t *out) {
  for (int i = 0; i < cache_n; i++) {
    piece_t *c = &cache[i];
    if (c->purged != e.purged) continue;
    if (c->base + c->size == e.base || e.base + e.size == c->base) {
      piece_t joined = take(i);
      if (joined.base > e.base) joined.base = e.base;
      joined.size += e.size;
      joined.since_ms = e.since_ms;
      joined.seq = e.seq;
      return insert(joined, out);
    }
  }
  int n = 0;
  size_t bound = keep_bound();
  for (;;) { /* the oldest out: of any while the count is full, else of the resident */
    int full = cache_n >= HSM_HUGE_CACHE;
    if (!full && (e.purged || cache_resident + e.size <= bound)) break;
    int oldest = -1;
    for (int i = 0; i < cache_n; i++)
      if ((full || !cache[i].purged) && (oldest < 0 || cache[i].seq < cache[oldest].seq))
        oldest = i;
    if (oldest < 0) break;
    out[n++] = take(oldest);
  }
  if (!e.purged && cache_resident + e.size > bound) { /* bigger than the bound itself */
    out[n++] = e;
    return n;
  }
  cache[cache_n++] = e;
  if (!e.purged) cache_resident += e.size;
  return n;
}

static void unmap_all(const piece_t *out, int n) {
  for (int i = 0; i < n; i++) piece_unmap(&out[i]);
}

/* The smallest piece of at least `need` bytes that starts on 2 MiB, resident or purged
 * as asked, split to `need`; the piece in *got. 0 when none. */
static int best_fit(size_t need, int purged, piece_t *got) {
  int best = -1;
  for (int i = 0; i < cache_n; i++) {
    const piece_t *c = &cache[i];
    if (c->size < need || ((uintptr_t)c->base & HSM_SEGMENT_MASK) != 0 ||
        (c->purged != 0) != purged)
      continue;
    if (best < 0 || c->size < cache[best].size) best = i;
  }
  if (best < 0) return 0;
  piece_t *c = &cache[best];
  *got = *c;
  got->size = need;
  if (c->size > need) { /* the rest stays: the same piece, moved up */
    c->base += need;
    c->size -= need;
    if (!c->purged) cache_resident -= need;
  } else {
    (void)take(best);
  }
  return 1;
}

/* Resident pieces, the newest first (the most recently freed: a program growing an
 * array by copies reuses the block it freed last, and nothing freed sits idle for
 * long), taken out until they cover `need` bytes (the last one split); returns how
 * many, in `out`. */
static int gather(size_t need, piece_t *out) {
  int n = 0;
  size_t have = 0;
  while (have < need) {
    int big = -1;
    for (int i = 0; i < cache_n; i++)
      if (!cache[i].purged && (big < 0 || cache[i].seq > cache[big].seq)) big = i;
    if (big < 0) break;
    piece_t *c = &cache[big];
    size_t want = need - have;
    if (c->size > want) {
      out[n] = *c;
      out[n].size = want;
      c->base += want;
      c->size -= want;
      cache_resident -= want;
    } else {
      out[n] = take(big);
    }
    have += out[n++].size;
  }
  return n;
}

/* A region of `need` bytes made of the pieces (moved in, in order) and fresh pages;
 * returns it, or NULL (the pieces are then unmapped). *moved: the bytes moved. */
static uint8_t *assemble(size_t need, piece_t *pieces, int n, size_t *moved) {
  *moved = 0;
  uint8_t *region = hsm_os_map_aligned(need, HSM_SEGMENT_SIZE);
  if (region == NULL) {
    unmap_all(pieces, n);
    return NULL;
  }
  int err = errno;
  for (int i = 0; i < n; i++) {
    void *to = region + *moved;
    if (mremap(pieces[i].base, pieces[i].size, pieces[i].size, MREMAP_MAYMOVE | MREMAP_FIXED, to) ==
        to) {
      /* its old range is gone (an unmap to the trace, as the statistics count it), and
       * its pages replace fresh ones of the region */
      HSM_TRACE(HSM_EV_UNMAP, NULL, pieces[i].base, pieces[i].size);
      hsm_stat_add(&hsm_gstats.reserved, NULL, -(int64_t)pieces[i].size);
      hsm_stat_add(&hsm_gstats.committed, NULL, -(int64_t)pieces[i].size);
      *moved += pieces[i].size;
    } else { /* the region keeps its fresh pages there; the piece is lost */
      piece_unmap(&pieces[i]);
      for (int k = i + 1; k < n; k++) piece_unmap(&pieces[k]);
      break;
    }
  }
  errno = err;
  return region;
}

/* `fresh` bytes of a huge block are faulted in while pieces purged against growth
 * sit in the cache: gathered, they would have served it, so the purge cost this much
 * of a refault (each such piece counted once). */
static void refault_owed(size_t fresh) {
  size_t owed = 0;
  pthread_mutex_lock(&huge_lock);
  for (int i = 0; i < cache_n && owed < fresh; i++)
    if (cache[i].purged == 2) {
      owed += cache[i].size;
      cache[i].purged = 1;
      hsm_offset_reused(cache[i].since_ms);
    }
  trim_refaulted += (int64_t)(owed < fresh ? owed : fresh);
  pthread_mutex_unlock(&huge_lock);
}

/* A mapping of `need` bytes (whole pages), 2 MiB-aligned: a resident piece big enough,
 * resident pieces gathered (and what they lack fresh), a purged piece big enough (its
 * address space), or fresh. *dirty: the bytes from the mapping's start
 * that may hold old contents (calloc clears them). */
static hsm_huge_t *huge_map(size_t need, size_t *dirty) {
  piece_t got, pieces[HSM_HUGE_CACHE];
  int n = 0, fit = 0;
  *dirty = 0;
  pthread_mutex_lock(&huge_lock);
  if (hsm_options.cache_segments > 0) {
    fit = best_fit(need, 0, &got);
    if (!fit) n = gather(need, pieces);
    if (!fit && n == 0) fit = best_fit(need, 1, &got);
    if (fit && got.purged == 2) trim_refaulted += (int64_t)got.size;
  }
  pthread_mutex_unlock(&huge_lock);
  if (fit) {
    if (got.purged) {
      if (got.purged == 2) hsm_offset_refault((int64_t)got.size, got.since_ms);
      hsm_stat_add(&hsm_gstats.committed, &hsm_gstats.committed_peak, (int64_t)got.size);
      hsm_offset_growth(hsm_tls_heap_or_null(), (int64_t)got.size, 1);
    } else {
      *dirty = need;
    }
    return (hsm_huge_t *)got.base;
  }
  size_t moved = 0;
  uint8_t *region =
      n > 0 ? assemble(need, pieces, n, &moved) : hsm_os_map_aligned(need, HSM_SEGMENT_SIZE);
  if (region == NULL) return NULL;
  *dirty = moved;
  hsm_stat_add(&hsm_gstats.committed, &hsm_gstats.committed_peak, (int64_t)need);
  if (need > moved) {
    refault_owed(need - moved);
    hsm_offset_growth(hsm_tls_heap_or_null(), (int64_t)(need - moved), 1);
  }
  return (hsm_huge_t *)region;
}

void *hsm_huge_alloc(size_t size, size_t align, size_t *dirty) {
  if (size > ((size_t)1 << HSM_ADDRESS_BITS)) return NULL;
  hsm_huge_t *h;
  uint8_t *block;
  size_t map_size;
  *dirty = 0;
  if (align < HSM_SEGMENT_SIZE) {
    size_t offset = align > HSM_HUGE_HEADER ? align : HSM_HUGE_HEADER;
    map_size = round_page(offset + size);
    h = huge_map(map_size, dirty);
    if (h == NULL) return NULL;
    *dirty = *dirty > offset ? *dirty - offset : 0;
    block = (uint8_t *)h + offset;
    hsm_registry_set(block, HSM_REG_HUGE);
  } else {
    size_t want = HSM_SEGMENT_SIZE + round_page(size);
    int err = errno;
    uint8_t *raw =
        mmap(NULL, want + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    errno = err;
    if (raw == MAP_FAILED) return NULL;
    block = (uint8_t *)(((uintptr_t)raw + HSM_SEGMENT_SIZE + align - 1) & ~(uintptr_t)(align - 1));
    uint8_t *base = block - HSM_SEGMENT_SIZE;
    if (base > raw) munmap(raw, (size_t)(base - raw));
    size_t tail = (size_t)((raw + want + align) - (base + want));
    if (tail) munmap(base + want, tail);
    errno = err;
    h = (hsm_huge_t *)base;
    map_size = want;
    hsm_stat_add(&hsm_gstats.reserved, &hsm_gstats.reserved_peak, (int64_t)want);
    hsm_stat_add(&hsm_gstats.committed, &hsm_gstats.committed_peak, (int64_t)map_size);
    hsm_offset_growth(hsm_tls_heap_or_null(), (int64_t)map_size, 1);
    hsm_registry_set(block, HSM_REG_HUGE_PREV);
  }
  h->magic = HSM_HUGE_MAGIC;
  h->map_base = h;
  h->map_size = map_size;
  h->block = block;
  h->usable = (size_t)(((uint8_t *)h + map_size) - block);
  h->made = atomic_fetch_add_explicit(&huge_made, 1, memory_order_relaxed) + 1;
  hsm_stat_add(&hsm_gstats.huge, NULL, 1);
  hsm_stat_add(&hsm_gstats.huge_bytes, &hsm_gstats.huge_bytes_peak, (int64_t)h->usable);
  return block;
}

hsm_huge_t *hsm_huge_of(const void *p, unsigned kind) {
  uint8_t *unit = (uint8_t *)hsm_segment_of(p);
  return (hsm_huge_t *)(kind == HSM_REG_HUGE ? unit : unit - HSM_SEGMENT_SIZE);
}

void hsm_huge_free(hsm_huge_t *h) {
  hsm_registry_set(h->block, HSM_REG_NONE);
  hsm_stat_add(&hsm_gstats.huge, NULL, -1);
  hsm_stat_add(&hsm_gstats.huge_bytes, NULL, -(int64_t)h->usable);
  piece_t e = {(uint8_t *)h, h->map_size, hsm_now_ms(), 0, 0};
  /* (a mapping of a 2 MiB alignment has its header a unit before the block: not a piece) */
  int cacheable = h->map_base == (void *)h && hsm_options.cache_segments > 0;
  if (!cacheable) {
    piece_unmap(&e);
    return;
  }
  hsm_pressure_poll();
  /* The newest huge block, bigger than any freed before, goes back to the OS at once, as
   * glibc's first free of a mapped chunk does: no block of its size was reused so far,
   * and none is being grown out of it (a block grown by copies is freed after its
   * successor was made). Kept resident, gmsh's 23 MiB mesh array sat idle under what its
   * output stage made, 5% of its max RSS. Purged, not unmapped: the piece still serves
   * a later block, and a second free of it still reads a mapped header. */
  int newest = h->made == atomic_load_explicit(&huge_made, memory_order_relaxed);
  pthread_mutex_lock(&huge_lock);
  int biggest = e.size > freed_max;
  if (biggest) freed_max = e.size;
  pthread_mutex_unlock(&huge_lock);
  if (hsm_purge_at_once() || (biggest && newest)) { /* decay 0, or the node runs short */
    hsm_os_purge(e.base, e.size);
    hsm_stat_add(&hsm_gstats.committed, NULL, -(int64_t)e.size);
    e.purged = 1;
  }
  piece_t out[HSM_HUGE_CACHE + 1];
  pthread_mutex_lock(&huge_lock);
  e.seq = ++cache_seq;
  int n = insert(e, out);
  pthread_mutex_unlock(&huge_lock);
  unmap_all(out, n);
}

/* realloc of huge block p to `size` bytes, less than half its usable size and still
 * huge: the block stays where it is and the whole pages past its new end are unmapped,
 * as glibc's mremap does. Moving it faulted a fresh block in and copied it while the old
 * one was still resident, and kept the old one's pages resident in the cache after:
 * UMFPACK (Octave's sparse solve) shrinks its 16.4 MiB workspace to 6.4 MiB so. The
 * tail is not cached: a program trims a block to what it keeps, and the cache's
 * resident pieces are what a later growth may not offset. Returns 0 (the caller moves
 * the block) for a mapping of a 2 MiB alignment. */
int hsm_huge_shrink(void *p, size_t size) {
  unsigned kind = hsm_registry_kind(p);
  if (kind != HSM_REG_HUGE) return 0;
  hsm_huge_t *h = hsm_huge_of(p, kind);
  if (h->map_base != (void *)h) return 0;
  size_t map_size = round_page((size_t)(h->block - (uint8_t *)h) + size);
  if (map_size >= h->map_size) return 0;
  piece_t tail = {(uint8_t *)h + map_size, h->map_size - map_size, 0, 0, 0};
  size_t usable = (size_t)(((uint8_t *)h + map_size) - h->block);
  hsm_stat_add(&hsm_gstats.huge_bytes, NULL, -(int64_t)(h->usable - usable));
  hsm_heap_t *heap = hsm_heap_for_free(); /* the pages given back count as freed bytes */
  if (heap != NULL) HSM_COUNT(heap->stats.free_bytes[HSM_BIN_HUGE], h->usable - usable);
  h->map_size = map_size;
  h->usable = usable;
  piece_unmap(&tail);
  return 1;
}

/* realloc of huge block p to `size` bytes, more than its usable size: its pages move to
 * a bigger mapping with mremap (extended where it lies when the address space after it
 * is free, else moved to a 2 MiB-aligned region, as the cache's gathering moves pieces),
 * and only the growth is fresh, as glibc's mremap does. Copying it into a new block held
 * both resident at once: UMFPACK grows its workspace from 88.9 to 141.6 MiB so (Octave's
 * sparse lu of 3,000 columns), 89 MiB more at the peak. Returns the block's address, or
 * NULL (the caller moves it) for a mapping of a 2 MiB alignment or when mremap fails. */
void *hsm_huge_grow(void *p, size_t size) {
  unsigned kind = hsm_registry_kind(p);
  if (kind != HSM_REG_HUGE || size > ((size_t)1 << HSM_ADDRESS_BITS)) return NULL;
  hsm_huge_t *h = hsm_huge_of(p, kind);
  if (h->map_base != (void *)h) return NULL;
  size_t offset = (size_t)(h->block - (uint8_t *)h), old = h->map_size;
  size_t map_size = round_page(offset + size);
  if (map_size <= old) return NULL;
  int err = errno;
  uint8_t *base = (uint8_t *)h;
  if (mremap(base, old, map_size, 0) != (void *)base) { /* moved whole to a new region */
    uint8_t *region = hsm_os_map_aligned(map_size, HSM_SEGMENT_SIZE);
    if (region == NULL) return NULL;
    if (mremap(base, old, old, MREMAP_MAYMOVE | MREMAP_FIXED, region) != (void *)region) {
      hsm_os_unmap(region, map_size);
      errno = err;
      return NULL;
    }
    /* the old range is gone; the region's fresh pages there are the block's now */
    HSM_TRACE(HSM_EV_UNMAP, NULL, base, old);
    hsm_stat_add(&hsm_gstats.reserved, NULL, -(int64_t)old);
    hsm_registry_set(p, HSM_REG_NONE);
    base = region;
    h = (hsm_huge_t *)region;
    h->map_base = h;
    h->block = region + offset;
    hsm_registry_set(h->block, HSM_REG_HUGE);
  } else {
    HSM_TRACE(HSM_EV_MAP, NULL, base + old, map_size - old);
    hsm_stat_add(&hsm_gstats.reserved, &hsm_gstats.reserved_peak, (int64_t)(map_size - old));
  }
  errno = err;
  size_t usable = (size_t)((base + map_size) - h->block);
  hsm_stat_add(&hsm_gstats.huge_bytes, &hsm_gstats.huge_bytes_peak, (int64_t)(usable - h->usable));
  hsm_stat_add(&hsm_gstats.committed, &hsm_gstats.committed_peak, (int64_t)(map_size - old));
  hsm_heap_t *heap = hsm_tls_heap_or_null();
  if (heap != NULL) HSM_COUNT(heap->stats.alloc_bytes[HSM_BIN_HUGE], usable - h->usable);
  h->map_size = map_size;
  h->usable = usable;
  hsm_offset_growth(heap, (int64_t)(map_size - old), 1);
  return h->block;
}

/* Purge cached pieces idle for the decay delay; unmap those idle 8 times longer. */
void hsm_huge_cache_decay(uint64_t now, int force) {
  if (hsm_options.decay_ms < 0 && !force) return;
  long decay = force ? 0 : hsm_decay_now(); /* follows memory pressure (pressure.c) */
  uint64_t delay = decay > 0 ? (uint64_t)decay : 0;
  piece_t out[HSM_HUGE_CACHE];
  int n = 0;
  pthread_mutex_lock(&huge_lock);
  for (int i = 0; i < cache_n;) {
    piece_t *e = &cache[i];
    uint64_t idle = now >= e->since_ms ? now - e->since_ms : 0;
    if (idle >= delay) piece_purge(e, 1);
    if (force || idle >= HSM_UNMAP_IDLE_MS(delay)) out[n++] = take(i);
    else i++;
  }
  pthread_mutex_unlock(&huge_lock);
  unmap_all(out, n);
}

/* Purge resident cached pieces, oldest first, until `want` bytes went back; returns the
 * bytes purged (they stay cached, reading as zero). hsm_offset_growth asks, when fresh
 * memory is committed while idle memory is over its budget: that is a block in a
 * segment (a huge one takes the cache's resident pieces before anything fresh), which
 * no piece can serve. (Last in the file: the code before hsm_huge_free is what every
 * program runs, and it ends within the library's first 64 KiB window.) */
int64_t hsm_huge_cache_trim(int64_t want, uint64_t idle_before) {
  int64_t done = 0;
  pthread_mutex_lock(&huge_lock);
  uint64_t now = hsm_now_ms();
  if (now - trim_halved_ms >= HSM_IDLE_HALF_MS) {
    trim_halved_ms = now;
    trim_refaulted /= 2;
  }
  /* The newest resident pieces stay, twice as many bytes as purges here cost in
   * refaults lately: a program that frees a big array and builds it again a moment
   * later (a list rebuilt every step) would otherwise have it purged whenever its
   * small blocks grow in between, and fault it all in again. (Twice: the refaults
   * come a step after the purges, and what a step needs again is not all counted.) */
  int64_t spare = (int64_t)cache_resident - 2 * trim_refaulted;
  if (want > spare) want = spare;
  while (done < want) {
    int oldest = -1;
    for (int i = 0; i < cache_n; i++)
      if (!cache[i].purged && (oldest < 0 || cache[i].seq < cache[oldest].seq)) oldest = i;
    if (oldest < 0 || cache[oldest].since_ms >= idle_before) break;
    piece_t *c = &cache[oldest];
    size_t rest = round_page((size_t)(want - done));
    if (c->size > rest && cache_n < HSM_HUGE_CACHE) { /* its tail only, a piece of its own */
      piece_t tail = *c;
      c->size -= rest;
      cache_resident -= rest;
      tail.base += c->size;
      tail.size = rest;
      hsm_os_purge(tail.base, tail.size);
      hsm_stat_add(&hsm_gstats.committed, NULL, -(int64_t)tail.size);
      tail.purged = 2;
      cache[cache_n++] = tail;
      done += (int64_t)rest;
      break;
    }
    done += (int64_t)c->size;
    piece_purge(c, 2);
  }
  pthread_mutex_unlock(&huge_lock);
  return done;
}
