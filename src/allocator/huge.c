/* Huge blocks (above HSM_LARGE_MAX): one mapping each, its header in the first page.
 * The block starts in the mapping's first 2 MiB unit, so masking finds the header;
 * for alignments of 2 MiB and more the header sits in the unit just before the
 * block and the registry says so (HSM_REG_HUGE_PREV).
 * Freed mappings up to HSM_HUGE_CACHE_MAX bytes are kept (a few, with the same decay
 * as segments) and reused for a request that fits them closely. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>

#include "internal.h"

/* A cached mapping's size is kept here, not read from its header: purging the
 * mapping zeroes the header too (it is written anew when the mapping is reused). */
typedef struct {
  hsm_huge_t *h; /* the mapping's start (only mappings that start at their header are cached) */
  size_t size;
  uint64_t since_ms;
  int purged; /* 1: by the decay or pressure, 2: by hsm_offset_growth */
} huge_entry_t;

static pthread_mutex_t huge_lock = PTHREAD_MUTEX_INITIALIZER;
static huge_entry_t cache[HSM_HUGE_CACHE];
static int cache_n;

void hsm_huge_cache_lock(void) { pthread_mutex_lock(&huge_lock); }
void hsm_huge_cache_unlock(void) { pthread_mutex_unlock(&huge_lock); }

static size_t round_page(size_t n) { return (n + 4095) & ~(size_t)4095; }

/* The size of a new mapping for n bytes: n rounded up to one of 8 steps per power of
 * two (at most 12.5% more address space; the pages past the block are not touched).
 * Blocks of nearby sizes then get mappings of the same size, which the cache hands
 * from one to the other instead of mapping (and faulting in) a new one. */
static size_t map_class(size_t n) {
  n = round_page(n);
  unsigned top = 63u - (unsigned)__builtin_clzll((unsigned long long)n);
  if (top < 15) return n;
  size_t step = (size_t)1 << (top - 3);
  size_t up = (n + step - 1) & ~(step - 1);
  return up < n ? n : up; /* (overflow: keep n) */
}

/* A cached mapping of at least `need` bytes wasting at most a quarter (its size in
 * *size), or NULL. */
static hsm_huge_t *cache_take(size_t need, size_t *size, int *zeroed) {
  pthread_mutex_lock(&huge_lock);
  int best = -1;
  for (int i = 0; i < cache_n; i++) {
    size_t have = cache[i].size;
    if (have >= need && have - need <= HSM_HUGE_CACHE_SLACK(need) &&
        (best < 0 || have < cache[best].size))
      best = i;
  }
  hsm_huge_t *h = NULL;
  if (best >= 0) {
    h = cache[best].h;
    *size = cache[best].size;
    *zeroed = cache[best].purged != 0;
    if (cache[best].purged == 2) hsm_offset_refault((int64_t)*size);
    cache[best] = cache[--cache_n];
  }
  pthread_mutex_unlock(&huge_lock);
  if (h != NULL && *zeroed)
    hsm_stat_add(&hsm_gstats.committed, &hsm_gstats.committed_peak, (int64_t)*size);
  return h;
}

static void entry_unmap(huge_entry_t *e) {
  if (!e->purged) hsm_stat_add(&hsm_gstats.committed, NULL, -(int64_t)e->size);
  hsm_os_unmap(e->h, e->size);
}

/* Purge resident cached mappings, oldest first, until `want` bytes went back;
 * returns the bytes purged (they stay cached, reading as zero). */
int64_t hsm_huge_cache_trim(int64_t want) {
  int64_t done = 0;
  pthread_mutex_lock(&huge_lock);
  while (done < want) {
    int oldest = -1;
    for (int i = 0; i < cache_n; i++)
      if (!cache[i].purged && (oldest < 0 || cache[i].since_ms < cache[oldest].since_ms))
        oldest = i;
    if (oldest < 0) break;
    huge_entry_t *e = &cache[oldest];
    hsm_os_purge(e->h, e->size);
    hsm_stat_add(&hsm_gstats.committed, NULL, -(int64_t)e->size);
    e->purged = 2;
    done += (int64_t)e->size;
  }
  pthread_mutex_unlock(&huge_lock);
  return done;
}

void *hsm_huge_alloc(size_t size, size_t align, int *zeroed) {
  if (size > ((size_t)1 << HSM_ADDRESS_BITS)) return NULL;
  hsm_huge_t *h;
  uint8_t *block;
  size_t map_size;
  *zeroed = 1;
  if (align < HSM_SEGMENT_SIZE) {
    size_t offset = align > HSM_HUGE_HEADER ? align : HSM_HUGE_HEADER;
    map_size = map_class(offset + size);
    h = cache_take(map_size, &map_size, zeroed);
    if (h != NULL) {
      if (*zeroed) hsm_offset_growth(hsm_tls_heap_or_null(), (int64_t)map_size);
    } else {
      h = hsm_os_map_aligned(map_size, HSM_SEGMENT_SIZE);
      if (h == NULL) return NULL;
      hsm_stat_add(&hsm_gstats.committed, &hsm_gstats.committed_peak, (int64_t)map_size);
      hsm_offset_growth(hsm_tls_heap_or_null(), (int64_t)map_size);
    }
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
    hsm_offset_growth(hsm_tls_heap_or_null(), (int64_t)map_size);
    hsm_registry_set(block, HSM_REG_HUGE_PREV);
  }
  h->magic = HSM_HUGE_MAGIC;
  h->map_base = h;
  h->map_size = map_size;
  h->block = block;
  h->usable = (size_t)(((uint8_t *)h + map_size) - block);
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
  huge_entry_t e = {h, h->map_size, hsm_now_ms(), 0};
  int cacheable = h->map_base == (void *)h && h->map_size <= HSM_HUGE_CACHE_MAX &&
                  hsm_options.cache_segments > 0;
  hsm_pressure_poll();
  if (cacheable && hsm_purge_at_once()) { /* decay 0, or the node runs short */
    hsm_os_purge(h, h->map_size);
    hsm_stat_add(&hsm_gstats.committed, NULL, -(int64_t)h->map_size);
    e.purged = 1;
  }
  if (!cacheable) {
    entry_unmap(&e);
    return;
  }
  pthread_mutex_lock(&huge_lock);
  huge_entry_t old = {0};
  if (cache_n == HSM_HUGE_CACHE) { /* evict the oldest */
    int oldest = 0;
    for (int i = 1; i < cache_n; i++)
      if (cache[i].since_ms < cache[oldest].since_ms) oldest = i;
    old = cache[oldest];
    cache[oldest] = cache[--cache_n];
  }
  cache[cache_n++] = e;
  pthread_mutex_unlock(&huge_lock);
  if (old.h != NULL) entry_unmap(&old);
}

/* Purge cached mappings idle for the decay delay; unmap those idle 8 times longer. */
void hsm_huge_cache_decay(uint64_t now, int force) {
  if (hsm_options.decay_ms < 0 && !force) return;
  long decay = force ? 0 : hsm_decay_now(); /* follows memory pressure (pressure.c) */
  uint64_t delay = decay > 0 ? (uint64_t)decay : 0;
  pthread_mutex_lock(&huge_lock);
  int kept = 0;
  for (int i = 0; i < cache_n; i++) {
    huge_entry_t *e = &cache[i];
    uint64_t idle = now >= e->since_ms ? now - e->since_ms : 0;
    if (idle >= delay && !e->purged) {
      hsm_os_purge(e->h, e->size);
      hsm_stat_add(&hsm_gstats.committed, NULL, -(int64_t)e->size);
      e->purged = 1;
    }
    if (force || idle >= HSM_UNMAP_IDLE_MS(delay)) entry_unmap(e);
    else cache[kept++] = *e;
  }
  cache_n = kept;
  pthread_mutex_unlock(&huge_lock);
}
