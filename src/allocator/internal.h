/* hsmalloc internals: the data structures shared by the allocator's source files.
 *
 *   segment (2 MiB, aligned)  header | page table | 31 slices of 64 KiB
 *   page                      run of slices; small: blocks of one class, large: 1 block
 *   heap                      per-thread owner of segments and pages (an object, not
 *                             the thread: abandoned at thread exit, adopted by the next)
 *
 * Free lists per page: `free` (allocating from; the owner's frees go on top, so the
 * block freed last is reused first, still in cache) and `local_free` (blocks come
 * back from other threads: cold, used once `free` is empty). Frees from other
 * threads first wait in the freeing thread's per-class cache (reused there), then
 * go in batches to the owning *heap's* remote queue (an atomic stack) that the
 * owner drains on its slow path.
 */
#ifndef HS_INTERNAL_H
#define HS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>

#include "config.h"

#define HS_LIKELY(x)   __builtin_expect(!!(x), 1)
#define HS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HS_HIDDEN      __attribute__((visibility("hidden")))
#define HS_EXPORT      __attribute__((visibility("default")))
/* An exported glibc name for an internal function (defined beside its target). */
#define HS_ALIAS(name, target) extern __typeof__(target) name __attribute__((alias(#target), visibility("default")))

/* Per-thread counters are written by their owner only; relaxed load+store (no lock
 * prefix) keeps them cheap and lets readers merge them without a data race. */
typedef _Atomic uint64_t hs_counter_t;
#define HS_COUNT(c, n) atomic_store_explicit(&(c), atomic_load_explicit(&(c), memory_order_relaxed) + (n), memory_order_relaxed)
#define HS_READ(c)     atomic_load_explicit(&(c), memory_order_relaxed)

typedef struct hs_block_s { struct hs_block_s *next; } hs_block_t;
typedef struct hs_heap_s hs_heap_t;

/* Two cache lines: the first is written only when the page is set up (and by rare
 * flag changes), so threads freeing blocks remotely can read it while the owner
 * keeps writing the second one. */
typedef struct hs_page_s {
  /* -- set up once per use of the page -- */
  hs_heap_t *heap;             /* owner */
  uint8_t *start;
  size_t block_size;
  uint32_t reserved;           /* blocks that fit in the page */
  uint16_t class_id;           /* HS_BIN_LARGE for a large page */
  uint8_t slice_count;
  uint8_t span_zero;           /* the span came from zeroed OS memory */
  union {                      /* any flag set sends free() to the generic path; other
                                  threads read them with atomic loads */
    struct { uint8_t has_aligned; uint8_t is_large; uint8_t unused[2]; } f;
    uint32_t any;
  } flags;
  uint8_t in_use;
  /* -- the owner's working fields -- */
  _Alignas(64) hs_block_t *free;  /* blocks to allocate from (fast path) */
  hs_block_t *local_free;      /* blocks back from other threads (or freed while full) */
  uint32_t used;               /* blocks out (including those in remote transit) */
  uint32_t capacity;           /* blocks carved so far */
  uint8_t free_is_zero;        /* every block on `free` is fresh zeroed OS memory */
  uint8_t in_full;             /* parked on the heap's full list */
  struct hs_page_s *next, *prev;
} hs_page_t;

typedef struct hs_segment_s {
  uint32_t magic;
  uint32_t free_mask;          /* bit i: slice i is free */
  uint32_t touched_mask;       /* bit i: slice i may be resident (not purged since use) */
  uint32_t in_list;            /* linked in its heap's segment list */
  uint64_t dirty_since_ms;     /* oldest free-but-touched slice */
  hs_heap_t *heap;
  struct hs_segment_s *next, *prev;
  hs_page_t *slice_page[HS_SLICES];  /* slice -> its page (one load on free) */
  hs_page_t pages[HS_SLICES];      /* indexed by first slice */
} hs_segment_t;

typedef struct hs_huge_s {       /* header of a huge block's own mapping */
  uint32_t magic;
  uint32_t pad;
  void *map_base;
  size_t map_size;
  uint8_t *block;              /* start of the block */
  size_t usable;               /* usable bytes from `block` */
} hs_huge_t;

#define HS_SEGMENT_MAGIC 0x48534D31u  /* "HSM1" */
#define HS_HUGE_MAGIC    0x48534D48u  /* "HSMH" */

/* Registry byte per 2 MiB unit. */
enum { HS_REG_NONE = 0, HS_REG_SEGMENT = 1, HS_REG_HUGE = 2, HS_REG_HUGE_PREV = 3 };

typedef struct { hs_page_t *first, *last; } hs_page_queue_t;

typedef struct {
  hs_heap_t *dest;
  hs_block_t *head, *tail;
  uint32_t count;
  size_t bytes;
} hs_rbatch_t;

typedef struct {
  hs_counter_t allocs[HS_BINS];
  hs_counter_t allocs8[HS_CLASS_TABLE_MAX / 8 + 1];   /* malloc's fast path, by (size + 7) / 8 */
  hs_counter_t frees[HS_BINS];
  hs_counter_t alloc_bytes[HS_BINS];   /* usable bytes, large and huge bins only */
  hs_counter_t free_bytes[HS_BINS];
  hs_counter_t requested;              /* cumulative requested bytes */
  hs_counter_t slow;                   /* allocations that missed the fast path */
  hs_counter_t remote_frees;           /* blocks freed to another heap */
  hs_counter_t remote_pushes;          /* batches pushed (atomic operations) */
  hs_counter_t drains;                 /* non-empty remote queue drains */
  hs_counter_t drained;                /* blocks received through the queue */
  hs_counter_t foreign_frees;          /* pointers handed back to glibc */
} hs_heap_stats_t;

enum { HS_HEAP_OWNED = 1, HS_HEAP_ABANDONED = 2 };

struct hs_heap_s {
  /* -- the line other threads touch: their pushes, and the id they hash -- */
  _Atomic(hs_block_t *) remote;        /* other threads' frees, LIFO of batches */
  uint32_t id;                         /* set once */
  /* -- the owner's (other threads never write below; stats are only read) -- */
  _Alignas(64) hs_page_t *direct8[HS_CLASS_TABLE_MAX / 8 + 1];  /* by (size + 7) / 8: the
                                          current page of that size's class (malloc's lookup) */
  hs_page_t *direct[HS_CLASSES];       /* current page per class, never NULL */
  hs_page_queue_t queue[HS_CLASSES];   /* pages with (possibly) free blocks */
  hs_page_queue_t full;                /* pages with nothing to give */
  hs_page_t cache[HS_CLASSES];         /* other heaps' blocks this thread freed, reused
                                          first (pseudo-pages: only `free` is used) */
  uint32_t cache_count[HS_CLASSES];    /* pushes since the cache was last emptied */
  hs_segment_t *segments;              /* segments with free slices */
  hs_rbatch_t rbatch[HS_RBATCH_SLOTS];
  uint32_t slow_until_decay;
  int state;
  hs_heap_t *all_next;                 /* every heap ever made (never freed) */
  hs_heap_t *abandoned_next;
  hs_heap_stats_t stats;
};

/* ---- global state (os.c, options.c, heap.c) ---- */
typedef struct {
  _Atomic int64_t reserved, reserved_peak;     /* bytes mapped */
  _Atomic int64_t committed, committed_peak;   /* bytes possibly resident */
  _Atomic int64_t segments, segments_peak;     /* segments owned by heaps */
  _Atomic int64_t segments_cached;
  _Atomic int64_t pages, pages_peak;           /* pages in use */
  _Atomic int64_t page_bytes, page_bytes_peak; /* bytes of slices in pages */
  _Atomic int64_t huge, huge_bytes, huge_bytes_peak;
  _Atomic int64_t purges, purged_bytes;        /* returns to the OS */
  _Atomic uint64_t orphan_frees;               /* frees by threads without a heap */
  _Atomic uint64_t foreign_frees;
} hs_global_stats_t;

typedef struct {
  long decay_ms;           /* <0: never return memory; 0: return at once */
  long cache_segments;
  int hugepages;
  int stats;               /* 0 off, 1 text at exit, 2 JSON at exit */
  char stats_file[256];
} hs_options_t;

HS_HIDDEN extern hs_global_stats_t hs_gstats;
HS_HIDDEN extern hs_options_t hs_options;
HS_HIDDEN extern _Atomic(uint8_t) hs_registry[HS_REGISTRY_SIZE];
HS_HIDDEN extern __thread hs_heap_t *hs_tls_heap __attribute__((tls_model("initial-exec")));
HS_HIDDEN extern hs_page_t hs_page_empty;

/* ---- size classes (sizeclass.c) ---- */
HS_HIDDEN extern uint8_t hs_class_table[HS_CLASS_TABLE_MAX / 8 + 1];
HS_HIDDEN extern size_t hs_class_size[HS_CLASSES];
HS_HIDDEN extern uint8_t hs_class_slices[HS_CLASSES];
HS_HIDDEN extern uint32_t hs_cache_limit[HS_CLASSES];
HS_HIDDEN extern uint8_t hs_class_lo8[HS_CLASSES], hs_class_hi8[HS_CLASSES];  /* direct8 range */
HS_HIDDEN void hs_sizeclass_init(void);
HS_HIDDEN size_t hs_class_of_computed(size_t size);

static inline size_t hs_class_of(size_t size) {
  if (HS_LIKELY(size <= HS_CLASS_TABLE_MAX)) return hs_class_table[(size + 7) >> 3];
  return hs_class_of_computed(size);
}

/* ---- OS and registry (os.c) ---- */
HS_HIDDEN void *hs_os_map_aligned(size_t size, size_t align);
HS_HIDDEN void hs_os_unmap(void *p, size_t size);
HS_HIDDEN void hs_os_purge(void *p, size_t size);
HS_HIDDEN uint64_t hs_now_ms(void);
HS_HIDDEN void hs_stat_add(_Atomic int64_t *now, _Atomic int64_t *peak, int64_t delta);

static inline unsigned hs_registry_kind(const void *p) {
  uintptr_t unit = (uintptr_t)p >> HS_SEGMENT_SHIFT;
  if (HS_UNLIKELY(unit >= HS_REGISTRY_SIZE)) return HS_REG_NONE;
  return atomic_load_explicit(&hs_registry[unit], memory_order_relaxed);
}
static inline void hs_registry_set(const void *p, unsigned kind) {
  atomic_store_explicit(&hs_registry[(uintptr_t)p >> HS_SEGMENT_SHIFT], (uint8_t)kind,
                        memory_order_relaxed);
}

static inline hs_segment_t *hs_segment_of(const void *p) {
  return (hs_segment_t *)((uintptr_t)p & ~(uintptr_t)HS_SEGMENT_MASK);
}
static inline hs_page_t *hs_page_of(hs_segment_t *seg, const void *p) {
  size_t slice = ((uintptr_t)p - (uintptr_t)seg) >> HS_SLICE_SHIFT;
  return seg->slice_page[slice];
}
/* Start of the block holding p (p may point inside it after an aligned allocation). */
static inline hs_block_t *hs_block_start(const hs_page_t *pg, const void *p) {
  size_t off = (size_t)((const uint8_t *)p - pg->start);
  return (hs_block_t *)(pg->start + off - off % pg->block_size);
}

/* ---- segments (segment.c) ---- */
HS_HIDDEN hs_page_t *hs_segment_page_alloc(hs_heap_t *heap, size_t slices);
HS_HIDDEN void hs_segment_page_free(hs_heap_t *heap, hs_page_t *pg);
HS_HIDDEN int hs_segment_page_resize(hs_heap_t *heap, hs_page_t *pg, size_t slices);
HS_HIDDEN void hs_segment_decay(hs_heap_t *heap, uint64_t now);
HS_HIDDEN void hs_segment_cache_decay(uint64_t now, int force);
HS_HIDDEN void hs_segment_cache_lock(void);
HS_HIDDEN void hs_segment_cache_unlock(void);

/* ---- pages (page.c), large blocks (large.c) ---- */
HS_HIDDEN void *hs_page_alloc_slow(hs_heap_t *heap, size_t size, size_t cls, int zero);
HS_HIDDEN void hs_page_free_generic(hs_heap_t *heap, hs_page_t *pg, void *p);
HS_HIDDEN void hs_page_after_free(hs_heap_t *heap, hs_page_t *pg);
HS_HIDDEN void hs_page_free_block(hs_heap_t *heap, hs_page_t *pg, hs_block_t *b);
HS_HIDDEN void hs_heap_collect_empty(hs_heap_t *heap);
HS_HIDDEN void hs_page_set_direct(hs_heap_t *heap, size_t cls);
HS_HIDDEN void *hs_large_alloc(hs_heap_t *heap, size_t size, int zero);
HS_HIDDEN int hs_large_resize(void *p, size_t size);

/* ---- heaps and threads (heap.c), options (options.c) ---- */
HS_HIDDEN hs_heap_t *hs_heap_get_slow(void);
HS_HIDDEN hs_heap_t *hs_heap_for_free(void);
HS_HIDDEN void hs_heap_maintenance(hs_heap_t *heap);
HS_HIDDEN void hs_collect_abandoned(void);
HS_HIDDEN void hs_heaps_lock(void);
HS_HIDDEN void hs_heaps_unlock(void);
HS_HIDDEN hs_heap_t *hs_heaps_first(void);
HS_HIDDEN void hs_options_read(void);

/* ---- frees of other heaps' blocks (remote.c) ---- */
HS_HIDDEN void hs_remote_free(hs_heap_t *self, hs_page_t *pg, hs_block_t *b);
HS_HIDDEN void hs_cache_overflow(hs_heap_t *self, size_t cls);
HS_HIDDEN void hs_cache_flush_all(hs_heap_t *heap);
HS_HIDDEN void hs_rbatch_flush_all(hs_heap_t *heap);
HS_HIDDEN void hs_heap_drain_remote(hs_heap_t *heap);

/* Make pg the class's current page (in both lookup tables). */
static inline void hs_direct_set(hs_heap_t *heap, size_t cls, hs_page_t *pg) {
  heap->direct[cls] = pg;
  for (unsigned i = hs_class_lo8[cls]; i <= hs_class_hi8[cls]; i++) heap->direct8[i] = pg;
}

/* Pop the first block of pg's free list (not empty) for a request of `size` in class
 * `cls`: the list pop, the counters, and zeroing for calloc where the block is not
 * fresh OS memory. Shared by the generic fast path and the slow path; hs_malloc's
 * leaf has its own copy without zeroing, counted per 8-byte index. */
static inline __attribute__((always_inline)) void *hs_page_pop(hs_heap_t *heap, hs_page_t *pg,
                                                              size_t cls, size_t size, int zero) {
  hs_block_t *b = pg->free;
  pg->free = b->next;
  pg->used++;
  HS_COUNT(heap->stats.allocs[cls], 1);
  HS_COUNT(heap->stats.requested, size);
  if (zero) {
    if (pg->free_is_zero) b->next = NULL;
    else memset(b, 0, size);
  }
  return b;
}

static inline hs_heap_t *hs_heap_get(void) {
  hs_heap_t *heap = hs_tls_heap;
  if (HS_LIKELY(heap != NULL)) return heap;
  return hs_heap_get_slow();
}

/* ---- huge blocks (huge.c) ---- */
HS_HIDDEN void *hs_huge_alloc(size_t size, size_t align, int *zeroed);
HS_HIDDEN void hs_huge_cache_decay(uint64_t now, int force);
HS_HIDDEN void hs_huge_cache_lock(void);
HS_HIDDEN void hs_huge_cache_unlock(void);
HS_HIDDEN void hs_huge_free(hs_huge_t *h);
HS_HIDDEN hs_huge_t *hs_huge_of(const void *p, unsigned kind);

/* ---- core operations (alloc.c, free.c) ---- */
HS_HIDDEN void *hs_malloc(size_t size);
HS_HIDDEN void *hs_calloc(size_t n, size_t size);
HS_HIDDEN void *hs_realloc(void *p, size_t size);
HS_HIDDEN void hs_free(void *p);
HS_HIDDEN void *hs_memalign(size_t align, size_t size);
HS_HIDDEN size_t hs_usable_size(const void *p);
HS_HIDDEN int hs_owns(const void *p);

static inline int hs_is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* ---- pointers we do not own (foreign.c) ---- */
HS_HIDDEN void hs_foreign_free(void *p);
HS_HIDDEN size_t hs_foreign_usable_size(void *p);

/* ---- statistics (stats.c) ---- */
HS_HIDDEN void hs_stats_at_exit(void);

#endif
