/* Chains: allocation arenas over a memory source (a caller's buffer, or OS segments
 * of the chain's own), declared in hsmalloc.h.
 *
 *   region     one stretch of a chain's memory: a caller's buffer (any 16-aligned
 *              address: found through the two-level map) or a 2 MiB-aligned OS
 *              mapping (found by masking the pointer). Header | page maps | pages.
 *   page       4 KiB; a span is a run of pages serving one fixed size class (blocks
 *              carved by a pointer bump, recycled on the class's free list) or
 *              holding one big block (above HSM_SMALL_MAX)
 *   chain      the free lists, the current span of each class, the regions; it
 *              lives at the start of its first region
 *
 * A chain's blocks never go to a heap and heap blocks never to a chain: free() and
 * malloc_usable_size() tell them apart by the registry byte of the pointer's 2 MiB
 * unit (HSM_REG_CHAIN_SEG: mask; HSM_REG_CHAIN_MAP: look up the map, which also keeps
 * what the unit was before, for the parts of it outside the buffer). Frees from
 * threads other than the owner of an unshared chain go on its atomic remote stack,
 * which the owner empties on its slow path. */
#ifndef HSM_CHAIN_H
#define HSM_CHAIN_H

#include "hsmalloc.h"
#include "internal.h"

#define HSM_CHAIN_MAGIC        0x4853434Eu /* "HSCN" */
#define HSM_CHAIN_REGION_MAGIC 0x48534352u /* "HSCR" */
#define HSM_CHAIN_BIG          0xFFu       /* span class of a big block */
#define HSM_CSPAN_ALIGNED      0x100u      /* a block of the span was handed out inside */
#define HSM_CSPAN_PAGES_SHIFT  9
#define HSM_CHAIN_SHARED_OWNER ((uintptr_t)1)
#define HSM_CHAIN_FLAGS_KNOWN  HSMALLOC_CHAIN_SHARED

typedef struct hsm_cregion_s {
  uint32_t magic;
  uint32_t npages;
  hsmalloc_chain_t *chain;
  uint8_t *base, *end; /* the pages */
  uint8_t *lo, *hi;    /* the whole region (buffer or mapping) */
  uint32_t bump;       /* pages handed out */
  uint32_t top;        /* highest bump since the region was made: pages touched */
  uint8_t from_os;     /* an OS mapping (unmapped at destroy) */
  uint8_t dedicated;   /* an OS mapping made for one big block (unmapped at reset) */
  uint32_t *head;      /* per page: the first page of its span */
  uint32_t *span;      /* per page of a span: pages << 9 | HSM_CSPAN_ALIGNED | class (every
                          page holds it, so that free reads one map, not two) */
  struct hsm_cregion_s *next;
} hsm_cregion_t;

/* A free span (its first bytes): big blocks freed, and region tails. */
typedef struct hsm_cfree_s {
  struct hsm_cfree_s *next;
  hsm_cregion_t *region;
  uint32_t first, pages;
} hsm_cfree_t;

/* Classes: the fixed ones (whose 24, 40, ... 120-byte classes are 8-byte aligned:
 * sizes 17-128 with a remainder mod 16 of 1-8 take them, a 20-byte object 24 bytes, as
 * in an application's pool), then big blocks. */
#define HSM_CHAIN_CLASSES HSM_FIXED_CLASSES
#define HSM_CHAIN_BIN_BIG HSM_CHAIN_CLASSES
#define HSM_CHAIN_BINS    (HSM_CHAIN_CLASSES + 1)

struct hsmalloc_chain {
  uintptr_t owner;                      /* the owner thread's mark, or HSM_CHAIN_SHARED_OWNER */
  hsm_block_t *free[HSM_CHAIN_CLASSES]; /* beside it: the fast paths read both */
  uint32_t magic;
  uint32_t flags;
  uint8_t *cur[HSM_CHAIN_CLASSES], *cur_end[HSM_CHAIN_CLASSES]; /* the span being carved */
  _Atomic(hsm_block_t *) remote; /* blocks freed by other threads (unshared chains) */
  pthread_mutex_t lock;          /* shared chains */
  hsm_cregion_t *regions;        /* in creation order; the first holds this struct */
  hsm_cregion_t *region_now;     /* where new spans are cut */
  hsm_cfree_t *spans_free;
  size_t limit;         /* OS source: bytes it may map (0: no limit) */
  size_t mapped;        /* OS source: bytes mapped */
  _Atomic int defaults; /* threads that have it as their default now */
  /* statistics (the owner's writes, or under the lock) */
  hsm_counter_t allocs[HSM_CHAIN_BINS], frees[HSM_CHAIN_BINS];
  hsm_counter_t slow, requested, big_bytes_out, remote_frees, drains, reallocs;
  hsm_counter_t allocated; /* usable bytes of big blocks handed out (small: per class) */
  hsm_counter_t spans, spans_peak;
  hsm_counter_t rfq_bytes; /* bytes of the blocks taken back from the remote stack */
  /* memory, kept up to date so that the figures are read without walking regions
   * (a dump from another thread may run while the owner unmaps one) */
  hsm_counter_t regions_n, reserved_bytes, meta_bytes; /* bookkeeping: headers and maps */
  hsm_counter_t span_pages;                            /* pages in spans handed out now */
  hsm_counter_t touched_pages; /* pages handed out once (a chain returns none before destroy) */
  hsm_counter_t committed_peak;
  /* NUMA: the node its memory is bound to (-1: left to the kernel) */
  int32_t numa_node;
  hsm_counter_t numa_binds, numa_bind_failures;
  /* the live-chain list (the JSON dumps), a number and a name */
  struct hsmalloc_chain *live_next, *live_prev;
  uint32_t id;
  char name[32];
};

/* ---- the owner's mark: the thread pointer (one load of %fs:0; unique among live
 * threads, as heaps' fast owners use it; never HSM_CHAIN_SHARED_OWNER) ---- */
static inline __attribute__((always_inline)) uintptr_t hsm_chain_self(void) {
  return (uintptr_t)hsm_thread_self();
}

/* ---- owner lookup (chain_map.c) ---- */
/* The region holding block pointer p (in its pages), or NULL; *prior gets the registry
 * kind the unit has for the rest of its addresses. kind is p's registry byte. */
HSM_HIDDEN hsm_cregion_t *hsm_chain_region_of(const void *p, unsigned kind, unsigned *prior);
/* Register a caller buffer's region: 0, or EBUSY when it overlaps another chain's. */
HSM_HIDDEN int hsm_chain_map_add(hsm_cregion_t *r);
HSM_HIDDEN void hsm_chain_map_remove(hsm_cregion_t *r);

/* ---- memory and blocks (chain.c) ---- */
HSM_HIDDEN hsmalloc_chain_t *hsm_chain_new(void *buf, size_t size, unsigned flags, int *err);
/* packed: a packed class may serve the size (explicit chain calls; not malloc) */
HSM_HIDDEN void *hsm_chain_alloc(hsmalloc_chain_t *c, size_t size, int packed);
HSM_HIDDEN void hsm_chain_free_block(hsmalloc_chain_t *c, hsm_cregion_t *r, void *p);
HSM_HIDDEN size_t hsm_chain_usable(const hsm_cregion_t *r, const void *p);
HSM_HIDDEN uint8_t *hsm_chain_block_of(const hsm_cregion_t *r, const void *p, unsigned *cls,
                                       size_t *bsize);
HSM_HIDDEN void hsm_chain_drain(hsmalloc_chain_t *c);
HSM_HIDDEN void hsm_chain_mark_aligned(hsm_cregion_t *r, const void *p);
HSM_HIDDEN void hsm_chain_clear(hsmalloc_chain_t *c);
HSM_HIDDEN void hsm_chain_release(hsmalloc_chain_t *c);
HSM_HIDDEN void hsm_chain_fill_stats(hsmalloc_chain_t *c, hsmalloc_stats_t *st);
/* Place [r->lo, r->hi) (an OS region) or the whole pages of a caller's buffer on
 * c->numa_node (-1: the kernel's default); pages already there are moved. 0 or -errno. */
HSM_HIDDEN int hsm_chain_region_bind(hsmalloc_chain_t *c, hsm_cregion_t *r);

/* ---- the live chains (chain_stats.c) ---- */
HSM_HIDDEN void hsm_chain_live_add(hsmalloc_chain_t *c);
HSM_HIDDEN void hsm_chain_live_remove(hsmalloc_chain_t *c);

/* ---- the fast paths, inlined into the entry points (chain_api.c) ---- */
HSM_HIDDEN extern size_t hsm_chain_class_size[HSM_CHAIN_CLASSES];

/* Not `packed` (a default chain serving malloc with HSMALLOC_PACKED=0): 17-128 bytes
 * rounded up to 16 for 16-byte alignment. */
static inline size_t hsm_chain_class_of(size_t size, int packed) {
  if (!packed && size - 17 < 112) size = (size + 15) & ~(size_t)15;
  return hsm_class_of(size);
}

/* A recycled block of class cls, or the next one of the class's span, in *out: 0 when
 * the span is spent (the caller's slow path cuts another). Inlined into both fast paths
 * (a flag, not a NULL test, so that the bump needs no test of its own). */
static inline __attribute__((always_inline)) int hsm_chain_take(hsmalloc_chain_t *c, size_t cls,
                                                                size_t size, void **out) {
  hsm_block_t *b = c->free[cls];
  if (HSM_LIKELY(b != NULL)) {
    c->free[cls] = b->next;
    *out = b;
  } else {
    /* no span yet: cur and cur_end are both NULL, so the bound test fails too */
    uintptr_t at = (uintptr_t)c->cur[cls], next = at + hsm_chain_class_size[cls];
    if (HSM_UNLIKELY(next > (uintptr_t)c->cur_end[cls])) return 0;
    c->cur[cls] = (uint8_t *)next;
    *out = (void *)at;
  }
  HSM_COUNT(c->allocs[cls], 1);
  HSM_COUNT(c->requested, size);
  return 1;
}

/* A small block by hsm_chain_take, else hsm_chain_alloc. */
static inline __attribute__((always_inline)) void *hsm_chain_alloc_fast(hsmalloc_chain_t *c,
                                                                        size_t size, int packed) {
  void *p;
  if (HSM_LIKELY(size <= HSM_SMALL_MAX) &&
      hsm_chain_take(c, hsm_chain_class_of(size, packed), size, &p))
    return p;
  return hsm_chain_alloc(c, size, packed);
}

/* The region of a chain's OS segment by masking, else the out-of-line lookup. */
static inline hsm_cregion_t *hsm_chain_region_fast(const void *p, unsigned kind, unsigned *prior) {
  if (HSM_LIKELY(kind == HSM_REG_CHAIN_SEG)) {
    hsm_cregion_t *r = (hsm_cregion_t *)((uintptr_t)p & ~(uintptr_t)HSM_SEGMENT_MASK);
    if (HSM_LIKELY(r->magic == HSM_CHAIN_REGION_MAGIC && (const uint8_t *)p >= r->base &&
                   (const uint8_t *)p < r->end)) {
      *prior = HSM_REG_NONE;
      return r;
    }
  }
  return hsm_chain_region_of(p, kind, prior);
}

/* The owner frees p (a block start of a small class) onto its class's list; anything
 * else takes hsm_chain_free_block. */
static inline __attribute__((always_inline)) void hsm_chain_free_fast(hsmalloc_chain_t *c,
                                                                      hsm_cregion_t *r, void *p) {
  size_t page = (size_t)((uint8_t *)p - r->base) >> HSM_CHAIN_PAGE_SHIFT;
  size_t cls = r->span[page] & 0x1FF; /* the class, and the aligned flag */
  if (HSM_LIKELY(cls < HSM_CHAIN_CLASSES)) {
    hsm_block_t *b = p;
    b->next = c->free[cls];
    c->free[cls] = b;
    HSM_COUNT(c->frees[cls], 1);
    return;
  }
  hsm_chain_free_block(c, r, p);
}

/* ---- one line on stderr, then abort (bad use of a chain) ---- */
HSM_HIDDEN __attribute__((noreturn)) void hsm_chain_die(const char *what, const void *a,
                                                        const void *b);

#endif
