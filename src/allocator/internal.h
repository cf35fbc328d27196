/* hsmalloc internals: the data structures shared by the allocator's source files.
 *
 *   segment (2 MiB, aligned)  header | page table | 31 slices of 64 KiB
 *   page                      run of slices; small: blocks of one class, large: 1 block
 *   heap                      per-thread owner of segments and pages (an object, not
 *                             the thread: abandoned at thread exit, adopted by the next)
 *   huge block                its own mapping, the header in its first 4 KiB page
 *
 * Free lists per page: `free` (allocating from; the owner's frees go on top, so the
 * block freed last is reused first, still in cache) and `local_free` (blocks come
 * back from other threads: cold, used once `free` is empty). Frees from other
 * threads first wait in the freeing thread's per-class cache (reused there), then
 * go in batches to the owning *heap's* remote queue (an atomic stack) that the
 * owner drains on its slow path.
 */
#ifndef HSM_INTERNAL_H
#define HSM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

#define HSM_LIKELY(x)   __builtin_expect(!!(x), 1)
#define HSM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HSM_HIDDEN      __attribute__((visibility("hidden")))
#define HSM_EXPORT      __attribute__((visibility("default")))
/* An exported glibc name for an internal function (defined beside its target). */
#define HSM_ALIAS(name, target) \
  extern __typeof__(target) name __attribute__((alias(#target), visibility("default")))

#include "primitives.h" /* counters and compares of one instruction */

/* A free block: the link of its list, and the free mark (check.c): the address of its
 * page (xor the page's key in secure mode), written by every free and cleared by
 * every allocation, so a second free of the block finds it. Every block is at least
 * 16 bytes. */
typedef struct hsm_block_s {
  struct hsm_block_s *next;
  uintptr_t mark;
} hsm_block_t;
/* Default mode: a block carved and never handed out is marked with its page's address
 * and this bit (page structs are 128-byte aligned). */
#define HSM_MARK_FRESH ((uintptr_t)1)
typedef struct hsm_heap_s hsm_heap_t;

/* Two cache lines: the first is written only when the page is set up or carves more
 * blocks (and by rare flag changes), so every thread freeing its blocks reads it while
 * the owner keeps writing the second one. A heap's per-class caches are pages too
 * (pseudo-pages: `free` is the cache's list, `used` its room, `reserved` its bound). */
typedef struct hsm_page_s {
  /* -- set up once per use of the page -- */
  hsm_heap_t *heap; /* owner */
  uint8_t *start;
  size_t block_size;
  uint32_t reserved; /* blocks that fit in the page */
  uint16_t class_id; /* HSM_BIN_LARGE for a large page; hot classes follow the fixed ones */
  uint8_t slice_count;
  uint8_t span_zero; /* the span came from zeroed OS memory */
  /* Flags; every thread reads them with atomic loads (free's slow path). */
  union {
    struct {
      uint8_t has_aligned;
      uint8_t is_large;
      uint8_t secure; /* HSMALLOC_SECURE=1, in use: every free takes secure mode's path */
      uint8_t unused;
    } f;
    uint32_t any;
  } flags;
  union {
    /* offsetof(hsm_heap_t, cache[class_id]): free's fast path finds the freeing thread's
     * cache of the class from its heap with one add */
    uint32_t cache_off;
    uint32_t large_request; /* a large page in secure mode: the request (its canary's place) */
  };
#define HSM_FLAGS_SECURE_ONLY (1u << 16) /* flags.any with only f.secure set (little-endian) */
  /* free's fast path's bound for hsm_block_ok: the carved blocks' (limit's copy: the
   * carved count lives on the owner's busy line), stored as the page carves
   * (page_extend: once every few KiB); 0 while the page is not in use, and for a large
   * page and a secure-mode one, so that the block-start check fails for every pointer
   * into such a page and its free takes the slow path, which sorts it out */
  uint64_t free_limit;
  /* free's block-start check (hsm_block_ok): 2^64 / block_size rounded down, plus 1,
   * and start times that */
  uint64_t div_magic, start_magic;
  /* -- the owner's working fields -- */
  _Alignas(64) hsm_block_t *free; /* blocks to hand out (a cache: its list) */
  hsm_block_t *local_free;        /* blocks back from caches and other threads */
  /* a page: blocks out (in threads' caches, in remote transit, live), and HSM_USED_FULL
   * while it is parked on the full list; a cache: its room, the frees it takes before
   * it is flushed (allocations from it give one back: hsm_dec_le0 on free's fast path) */
  uint32_t used;
  /* a class of blocks spanning whole OS pages (purge.c): free blocks beyond the heap's
   * reserve of the class have their whole pages given back, and wait on `purged` */
  uint8_t purging;
  uint8_t kept;      /* empty, held by postponed free (on the heap's kept list) */
  uint8_t in_use;    /* read by other threads' generic frees (atomic loads) */
  uint8_t free_cold; /* purging: `free` holds blocks not resident (purged, or fresh) */
  /* blocks carved so far (hsm_page_capacity) times hsm_block_step(pg): hsm_block_ok's
   * bound, the carved blocks' end in the units of its product (other threads read it
   * with atomic loads) */
  uint64_t limit;
  /* secure mode: hsm_remote_key, xor'd into the links of `free` and `local_free`; 0
   * otherwise (here, so that the first line stays one line) */
  uintptr_t key;
  union {
    /* a cache: the frees into it (free's fast path counts here, beside the list; the
     * statistics add them to the heap's frees[class]) */
    hsm_counter_t frees;
    hsm_block_t *purged; /* a purging page: free blocks whose whole pages went back */
  };
  struct hsm_page_s *next, *prev;
} hsm_page_t;
_Static_assert(sizeof(hsm_page_t) == 128, "a page's metadata is two cache lines");

typedef struct hsm_segment_s {
  uint32_t magic;
  uint32_t free_mask;      /* bit i: slice i is free */
  uint32_t touched_mask;   /* bit i: slice i may be resident (not purged since use) */
  uint32_t in_list;        /* linked in its heap's segment list */
  uint32_t offset_mask;    /* slices purged by hsm_offset_growth, not used since */
  uint64_t dirty_since_ms; /* oldest free-but-touched slice */
  hsm_heap_t *heap;
  int32_t numa_node;   /* node its memory is placed on (numa.c), -1: left to the kernel */
  uint32_t numa_bound; /* a placement was requested with mbind */
  struct hsm_segment_s *next, *prev;
  hsm_page_t *slice_page[HSM_SLICES]; /* slice -> its page (one load on free) */
  hsm_page_t pages[HSM_SLICES];       /* indexed by first slice */
  /* of a touched slice: its 4 KiB pages from the start that its pages carved (may be
   * resident), 0-16; a large page's slices count whole. After `pages`, so that a cached
   * segment's header reset keeps it. */
  uint8_t resident[HSM_SLICES];
} hsm_segment_t;

typedef struct hsm_huge_s { /* header of a huge block's own mapping */
  uint32_t magic;
  uint32_t pad;
  void *map_base;
  size_t map_size;
  uint8_t *block;   /* start of the block */
  size_t usable;    /* usable bytes from `block` */
  size_t requested; /* secure mode: the request (its canary's place) */
} hsm_huge_t;

#define HSM_SEGMENT_MAGIC 0x48534D31u /* "HSM1" */
#define HSM_HUGE_MAGIC    0x48534D48u /* "HSMH" */

/* Registry byte per 2 MiB unit. A chain's OS region is HSM_REG_CHAIN_SEG (masking finds
 * its header); a unit holding part of a caller's buffer is HSM_REG_CHAIN_MAP (chain.h).
 * HSM_REG_CHAIN_BLOCK is never stored: the chain routes' answer for "a chain's block". */
enum {
  HSM_REG_NONE = 0,
  HSM_REG_SEGMENT = 1,
  HSM_REG_HUGE = 2,
  HSM_REG_HUGE_PREV = 3,
  HSM_REG_CHAIN_SEG = 4,
  HSM_REG_CHAIN_MAP = 5,
  HSM_REG_CHAIN_BLOCK = 6
};

typedef struct {
  hsm_page_t *first, *last;
} hsm_page_queue_t;

typedef struct {
  hsm_heap_t *dest;
  hsm_block_t *head, *tail;
  uint32_t count;
  size_t bytes;
} hsm_rbatch_t;

#define HSM_USED_FULL 0x80000000u
#define HSM_TABLE8    (HSM_CLASS_TABLE_MAX / 8 + 1) /* 8-byte size steps of the tables */
_Static_assert(HSM_CLASSES <= UINT8_MAX, "fast_class holds a class in a byte");

typedef struct {
  hsm_counter_t allocs[HSM_BINS];
  hsm_counter_t requested[HSM_BINS]; /* requested bytes */
  hsm_counter_t slow[HSM_BINS];      /* allocations that missed the fast path */
  hsm_counter_t frees[HSM_BINS];
  hsm_counter_t alloc_bytes[HSM_BINS]; /* usable bytes, large and huge bins only */
  hsm_counter_t free_bytes[HSM_BINS];
  hsm_counter_t kept_pages[HSM_HOT_SLOTS]; /* empty pages held by postponed free now */
  hsm_counter_t remote_frees;              /* blocks freed to another heap */
  hsm_counter_t remote_pushes;             /* batches pushed (atomic operations) */
  hsm_counter_t drains;                    /* non-empty remote queue drains */
  hsm_counter_t drained;                   /* blocks received through the queue */
  hsm_counter_t foreign_frees;             /* pointers handed back to glibc */
  /* the allocator spy's per-heap figures (stats.c): what the heap holds, kept by
   * segment.c on its slow paths, and the bytes of the remote queue */
  hsm_counter_t segments;      /* segments owned now */
  hsm_counter_t committed;     /* bytes of them that may be resident (header + touched slices) */
  hsm_counter_t page_bytes;    /* bytes of slices in pages */
  hsm_counter_t reallocs;      /* realloc calls with a block and a size */
  hsm_counter_t drained_bytes; /* bytes of the blocks received through the remote queue */
  hsm_counter_t transfer_out;  /* blocks its cache put into the transfer cache */
  hsm_counter_t transfer_in;   /* blocks its cache took from the transfer cache */
} hsm_heap_stats_t;

enum { HSM_HEAP_OWNED = 1, HSM_HEAP_ABANDONED = 2 };

/* Who takes the packed classes (HSMALLOC_PACKED, in the order its names are read) */
typedef enum {
  HSM_PACKED_NONE,   /* "0" */
  HSM_PACKED_MALLOC, /* "1": malloc, and new from GCC-built code */
  HSM_PACKED_ALL,    /* "all": malloc and every new */
  HSM_PACKED_NEW     /* "new", the default: new from GCC-built code */
} hsm_packing_t;
static inline int hsm_packing_malloc(int packing) {
  return packing == HSM_PACKED_MALLOC || packing == HSM_PACKED_ALL;
}

typedef struct {
  uintptr_t lo, hi;  /* the module's loaded segments */
  unsigned long gen; /* module.c's count of dlcloses when found */
  int packed;
} hsm_module_memo_t;

struct hsm_heap_s {
  /* -- the line other threads touch: their pushes, and the id they hash -- */
  _Atomic(hsm_block_t *) remote; /* other threads' frees, LIFO of batches */
  uint32_t id;                   /* set once */
  /* -- the owner's (other threads never write below; stats are only read) -- */
  /* by (size + 7) / 8: the current page of that size's class (malloc's lookup); all
   * hsm_page_empty while a hot-size window samples the allocations */
  /* malloc's fast path: the class by size (not by 8-byte step: no index to compute),
   * class8's mapping; then fast_direct[class], the class's current page, or
   * hsm_page_empty while a hot-size window samples, a chain is the default, or in
   * secure mode (so that the fast path misses: hsm_fast_direct_refresh) */
  /* the mode decided once, at malloc's first compare (hsm_fast_direct_refresh): requests
   * below fast_lim try the fast path (0 in secure mode: none), below secure_lim secure
   * mode's (0 while a window samples or a chain is the default: both take the checked
   * path) */
  _Alignas(64) size_t fast_lim;
  size_t secure_lim;
  hsm_page_t *fast_direct[HSM_CLASSES];
  uint8_t fast_class[HSM_CLASS_TABLE_MAX + 1];
  hsm_page_t *direct[HSM_CLASSES]; /* current page per class, never NULL */
  uint8_t class8[HSM_TABLE8];      /* by (size + 7) / 8: the class serving it here */
  /* call-site lanes (site.c): per remembered call site, operator new's fast path: the
   * size last asked for there (HSM_SITE_MALLOC or HSM_SITE_PLAIN: lane 0, malloc's path;
   * HSM_SITE_NONE: lanes off) and
   * the class serving it; then 0 (lane 0: the ordinary classes) or the first class of
   * its lane; site_lanes 0 sends operator new to malloc */
  uintptr_t site_pc[HSM_SITE_SLOTS];
  uint8_t site_sc[HSM_SITE_SLOTS][2]; /* size, class: one line for both */
  uint8_t site_base[HSM_SITE_SLOTS];
  /* 0: the site's module was built by GCC only, new may be packed; HSM_SITE_ROW: 16 */
  uint8_t site_row[HSM_SITE_SLOTS];
  uint8_t site_next[HSM_SITE_LANE_CLASSES]; /* per fixed class: the lane the next site gets */
  uint8_t site_lanes;
  hsm_module_memo_t site_module;       /* the module of the last site learned (module.c) */
  hsm_page_queue_t queue[HSM_CLASSES]; /* pages with (possibly) free blocks */
  hsm_page_queue_t full;               /* pages with nothing to give */
  /* the thread's cache per class (remote.c): every block of the class this thread frees,
   * whichever heap owns it, and what it refilled from its pages; malloc pops from it.
   * Pseudo-pages: `free` is the list, `used` its room (frees it takes before a flush),
   * `reserved` its bound (the quarter or the whole of hsm_cache_limit[cls]) */
  hsm_page_t cache[HSM_CLASSES];
  hsm_segment_t *segments; /* segments with free slices */
  hsm_rbatch_t rbatch[HSM_RBATCH_SLOTS];
  uint32_t rbatch_live; /* bit i: rbatch[i] holds blocks (a flush visits only those) */
  uint32_t slow_until_decay;
  /* allocation slow paths so far, and the classes from HSM_IDLE_CLASS_FIRST whose empty
   * current page is kept (bit i: class HSM_IDLE_CLASS_FIRST + i) since slow path
   * idle_since[i] (page.c, hsm_heap_expire_idle) */
  uint32_t slow_seq;
  uint32_t idle_pages;
  /* slow paths left in which the thread that took this heap may swap it for an abandoned
   * heap holding more bytes of pages (heap.c, hsm_heap_absorb) */
  uint32_t absorb_left;
  uint32_t absorb_seen; /* heap.c's count of abandonments at its last look */
  uint32_t idle_since[HSM_FIXED_CLASSES - HSM_IDLE_CLASS_FIRST];
  /* per class of purging pages: free blocks on its pages' lists that are resident (the
   * reserve in use: purge.c) */
  uint32_t resident_free[HSM_CLASSES];
  /* the same classes' allocations at the last sweep of their caches (cache.c) */
  uint64_t idle_allocs[HSM_FIXED_CLASSES - HSM_IDLE_CLASS_FIRST];
  /* the fixed classes up to 8 KiB: their allocations as seen at the heap's last fresh
   * page of one of them, and the allocations of them all when each was last seen to
   * move (cache.c, hsm_cache_release_unused) */
  uint64_t fresh_allocs[HSM_IDLE_CLASS_FIRST];
  uint64_t fresh_total[HSM_IDLE_CLASS_FIRST];
  int state;
  hsm_heap_t *all_next; /* every heap ever made (never freed) */
  hsm_heap_t *abandoned_next;
  /* hot sizes (hot.c) */
  uint32_t sample_left;                               /* allocations left in the window, 0: none */
  uint32_t sample_total;                              /* allocations seen in the window */
  uint16_t sample_count[HSM_CLASS_TABLE_MAX / 8 + 1]; /* by 8-byte step: size rounded to 8, / 8 */
  /* the window's sizes above HSM_CLASS_TABLE_MAX: rounded to 16, and their counts */
  uint32_t sample_big[HSM_HOT_BIG_SAMPLES];
  uint16_t sample_big_count[HSM_HOT_BIG_SAMPLES];
  uint32_t sample_big_n;
  /* the big hot classes installed (above HSM_CLASS_TABLE_MAX: no 8-byte step to slot
   * them into): each serves the 16-byte step its block size ends */
  uint32_t hot_big_size[HSM_HOT_PER_HEAP];
  uint8_t hot_big_cls[HSM_HOT_PER_HEAP];
  uint32_t hot_big_n;
  uint64_t sampled_ms;                  /* when the last window began */
  uint8_t hot_on[HSM_HOT_SLOTS];        /* slot installed in this heap */
  uint8_t hot_pinned[HSM_HOT_SLOTS];    /* named by HSMALLOC_HOT_SIZES: never retired */
  uint8_t hot_cold[HSM_HOT_SLOTS];      /* consecutive windows below half the share */
  uint32_t hot_count;                   /* slots installed */
  hsm_page_queue_t kept[HSM_HOT_SLOTS]; /* empty pages held by postponed free */
  size_t kept_bytes[HSM_HOT_SLOTS];
  struct hsmalloc_chain *chain; /* the thread's default chain (hsmalloc_chain_set_default) */
  uint64_t rng;                 /* secure mode: page keys and the order of fresh blocks (check.c) */
  hsm_heap_stats_t stats;
};

/* ---- global state (os.c, options.c, heap.c) ---- */
typedef struct {
  _Atomic int64_t reserved, reserved_peak;   /* bytes mapped */
  _Atomic int64_t committed, committed_peak; /* bytes possibly resident */
  _Atomic int64_t segments, segments_peak;   /* segments owned by heaps */
  _Atomic int64_t segments_cached;
  _Atomic int64_t pages, pages_peak;           /* pages in use */
  _Atomic int64_t page_bytes, page_bytes_peak; /* bytes of slices in pages */
  _Atomic int64_t huge, huge_bytes, huge_bytes_peak;
  _Atomic int64_t purges, purged_bytes; /* returns to the OS */
  _Atomic uint64_t orphan_frees;        /* frees by threads without a heap */
  _Atomic uint64_t foreign_frees;
  /* purges that kept fresh memory from growing the resident set (hsm_offset_growth),
   * and the bytes of them committed again */
  _Atomic int64_t growth_purges, growth_purged_bytes, growth_refaulted_bytes;
} hsm_global_stats_t;

typedef struct {
  long decay_ms; /* <0: never return memory; 0: return at once */
  long cache_segments;
  int hugepages;
  int stats; /* 0 off, 1 text at exit, 2 JSON at exit */
  char stats_file[256];
  int hot_detect; /* HSMALLOC_HOT_DETECT: sample allocations for hot sizes */
  long hot_resample_ms;
  size_t hot_sizes[HSM_HOT_PER_HEAP]; /* HSMALLOC_HOT_SIZES, rounded to 16 */
  int hot_n;
  int pressure;             /* HSMALLOC_PRESSURE: adapt the decay to memory pressure */
  long pressure_check_ms;   /* HSMALLOC_PRESSURE_CHECK_MS */
  long pressure_hold_ms;    /* HSMALLOC_PRESSURE_HOLD_MS */
  char pressure_files[200]; /* HSMALLOC_PRESSURE_FILES: test hook, read this directory */
  int numa;                 /* HSMALLOC_NUMA: -1 auto (several nodes), 0 off, 1 always */
  int packed; /* HSMALLOC_PACKED, an hsm_packing_t (8-byte aligned classes 24 .. 120, sizeclass.c) */
  int site_lanes;       /* HSMALLOC_SITE_LANES: operator new's call-site lanes (site.c) */
  int stats_signal;     /* HSMALLOC_STATS_SIGNAL: dump on SIGUSR2 when stats are on */
  char trace_file[256]; /* HSMALLOC_TRACE: the event trace (trace.c) */
  int transfer;         /* HSMALLOC_TRANSFER: the transfer cache between threads (transfer.c) */
  long free_reserve;    /* HSMALLOC_FREE_RESERVE: bytes a class (purge.c), <0: all kept */
} hsm_options_t;

HSM_HIDDEN extern hsm_global_stats_t hsm_gstats;
HSM_HIDDEN extern hsm_options_t hsm_options;
HSM_HIDDEN extern _Atomic(uint8_t) hsm_registry[HSM_REGISTRY_SIZE];
/* The thread's heap; &hsm_heap_empty (whose fast_direct holds only hsm_page_empty) until
 * the thread's first allocation, so that malloc's fast path needs no NULL test. */
HSM_HIDDEN extern __thread hsm_heap_t *hsm_tls_heap __attribute__((tls_model("initial-exec")));
HSM_HIDDEN extern hsm_page_t hsm_page_empty;
HSM_HIDDEN extern hsm_heap_t hsm_heap_empty;
/* The thread pointer (the TCB's self pointer, %fs:0 on x86-64): unique among live
 * threads, read in one instruction (a chain's owner, chain.h). */
static inline __attribute__((always_inline)) void *hsm_thread_self(void) {
#if defined(__x86_64__)
  void *tp;
  __asm__("movq %%fs:0, %0" : "=r"(tp));
  return tp;
#else
  return __builtin_thread_pointer();
#endif
}
static inline hsm_heap_t *hsm_tls_heap_or_null(void) {
  hsm_heap_t *h = hsm_tls_heap;
  return h == &hsm_heap_empty ? NULL : h;
}

/* ---- size classes (sizeclass.c) ---- */
HSM_HIDDEN extern uint8_t hsm_class_table[HSM_TABLE8]; /* the fixed classes */
HSM_HIDDEN extern size_t hsm_class_size[HSM_CLASSES];
HSM_HIDDEN extern uint8_t hsm_class_slices[HSM_CLASSES];
HSM_HIDDEN extern uint32_t hsm_cache_limit[HSM_CLASSES];
/* the range of class8 indexes (sizes up to HSM_CLASS_TABLE_MAX) each class serves */
HSM_HIDDEN extern uint16_t hsm_class_lo8[HSM_CLASSES], hsm_class_hi8[HSM_CLASSES];
/* The 24, 40, ... 120-byte classes serve malloc (HSMALLOC_PACKED, fixed at start-up). */
HSM_HIDDEN extern int hsm_packed;
HSM_HIDDEN extern int hsm_packed_new; /* and operator new too (HSMALLOC_PACKED=all) */
/* malloc takes the packed classes too (HSMALLOC_PACKED=1 or all); by default it is
 * 16-byte aligned as glibc's is (Eigen, for one, asserts it) */
HSM_HIDDEN extern int hsm_malloc_packed;
/* The size whose class serves malloc(size): 16k+1 .. 16k+8 (up to 120) rounded up to
 * 16k+16 while malloc is 16-byte aligned. */
static inline size_t hsm_malloc_csize(size_t size) {
  if (hsm_malloc_packed || size - 17 >= 104 || ((size - 1) & 8) != 0) return size;
  return (size + 15) & ~(size_t)15;
}
HSM_HIDDEN void hsm_class_set_size(size_t cls, size_t size);
HSM_HIDDEN void hsm_sizeclass_init(void);
HSM_HIDDEN size_t hsm_class_of_computed(size_t size);

static inline size_t hsm_class_of(size_t size) {
  if (HSM_LIKELY(size <= HSM_CLASS_TABLE_MAX)) return hsm_class_table[(size + 7) >> 3];
  return hsm_class_of_computed(size);
}
/* The big hot class (above HSM_CLASS_TABLE_MAX) installed in heap that serves `size`
 * (its block size rounded down to 16 is below size), or 0. */
static inline size_t hsm_hot_big_class(const hsm_heap_t *heap, size_t size) {
  for (uint32_t i = 0; i < heap->hot_big_n; i++)
    if (heap->hot_big_size[i] >= size && heap->hot_big_size[i] - size < 16)
      return heap->hot_big_cls[i];
  return 0;
}
/* The class serving `size` (at most HSM_SMALL_MAX) in this heap: a hot class where one
 * is installed. */
static inline size_t hsm_heap_class_of(const hsm_heap_t *heap, size_t size) {
  if (HSM_LIKELY(size <= HSM_CLASS_TABLE_MAX)) return heap->class8[(size + 7) >> 3];
  size_t hot = HSM_UNLIKELY(heap->hot_big_n != 0) ? hsm_hot_big_class(heap, size) : 0;
  return hot ? hot : hsm_class_of_computed(size);
}

/* ---- OS and registry (os.c) ---- */
HSM_HIDDEN void *hsm_os_map_aligned(size_t size, size_t align);
HSM_HIDDEN void hsm_os_unmap(void *p, size_t size);
HSM_HIDDEN void hsm_os_purge(void *p, size_t size);
HSM_HIDDEN uint64_t hsm_now_ms(void);
HSM_HIDDEN void hsm_stat_add(_Atomic int64_t *now, _Atomic int64_t *peak, int64_t delta);

static inline unsigned hsm_registry_kind(const void *p) {
  uintptr_t unit = (uintptr_t)p >> HSM_SEGMENT_SHIFT;
  if (HSM_UNLIKELY(unit >= HSM_REGISTRY_SIZE)) return HSM_REG_NONE;
  return atomic_load_explicit(&hsm_registry[unit], memory_order_relaxed);
}
static inline void hsm_registry_set(const void *p, unsigned kind) {
  atomic_store_explicit(&hsm_registry[(uintptr_t)p >> HSM_SEGMENT_SHIFT], (uint8_t)kind,
                        memory_order_relaxed);
}

static inline hsm_segment_t *hsm_segment_of(const void *p) {
  return (hsm_segment_t *)((uintptr_t)p & ~(uintptr_t)HSM_SEGMENT_MASK);
}
static inline hsm_page_t *hsm_page_of(hsm_segment_t *seg, const void *p) {
  size_t slice = ((uintptr_t)p - (uintptr_t)seg) >> HSM_SLICE_SHIFT;
  return seg->slice_page[slice];
}
/* Start of the block holding p (p may point inside it after an aligned allocation). */
static inline hsm_block_t *hsm_block_start(const hsm_page_t *pg, const void *p) {
  size_t off = (size_t)((const uint8_t *)p - pg->start);
  return (hsm_block_t *)(pg->start + off - off % pg->block_size);
}

#include "check.h" /* hardening: the block-start bound, free marks, secure mode */

/* ---- segments (segment.c) ---- */
HSM_HIDDEN hsm_page_t *hsm_segment_page_alloc(hsm_heap_t *heap, size_t slices);
/* a small class's page: where its last one was when that is free and resident */
HSM_HIDDEN hsm_page_t *hsm_segment_page_alloc_class(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_segment_page_free(hsm_heap_t *heap, hsm_page_t *pg);
/* placement.c: a placement of n slices costs the fresh slices it touches (each is
 * resident memory the process did not have), has the 4 KiB pages its touched slices
 * hold resident (hsm_segment_t.resident), and lies in a free run of len slices. */
typedef struct {
  unsigned fresh, res, len;
} hsm_run_cost_t;
#define HSM_SLICE_PAGES ((unsigned)(HSM_SLICE_SIZE / 4096))
HSM_HIDDEN int hsm_place_run(uint32_t mask, uint32_t touched, const uint8_t *resident, unsigned n,
                             hsm_run_cost_t *c);
HSM_HIDDEN int hsm_place_better(const hsm_run_cost_t *a, const hsm_run_cost_t *b);
HSM_HIDDEN void hsm_place_note_resident(hsm_segment_t *seg, const hsm_page_t *pg, size_t first);
HSM_HIDDEN int hsm_segment_page_resize(hsm_heap_t *heap, hsm_page_t *pg, size_t slices);
HSM_HIDDEN void *hsm_segment_page_slide(hsm_heap_t *heap, hsm_page_t *pg, size_t slices);
HSM_HIDDEN void hsm_segment_decay(hsm_heap_t *heap, uint64_t now);
HSM_HIDDEN void hsm_segment_decay_slices(hsm_heap_t *heap, uint64_t now, int force);
HSM_HIDDEN void hsm_segment_cache_decay(uint64_t now, int force);
HSM_HIDDEN void hsm_segment_cache_lock(void);
HSM_HIDDEN void hsm_segment_cache_unlock(void);
HSM_HIDDEN int64_t hsm_segment_cache_trim(int64_t want);
/* Fresh memory is being committed: give back as much resident idle memory (over a
 * budget); hsm_offset_refault: memory it gave back is committed again. */
HSM_HIDDEN void hsm_offset_growth(hsm_heap_t *heap, int64_t bytes);
HSM_HIDDEN void hsm_offset_refault(int64_t bytes);

/* ---- pages (page.c), large blocks (large.c) ---- */
HSM_HIDDEN void *hsm_page_alloc_slow(hsm_heap_t *heap, size_t size, size_t cls, int zero);
/* The slow path's work: the class's empty cache refilled from its pages (0: no memory). */
HSM_HIDDEN int hsm_page_fill_cache(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_page_free_generic(hsm_heap_t *heap, hsm_page_t *pg, void *p);
HSM_HIDDEN void hsm_page_after_free(hsm_heap_t *heap, hsm_page_t *pg);
HSM_HIDDEN void hsm_heap_expire_idle(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_page_free_idle(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_page_free_unused(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_cache_release_unused(hsm_heap_t *heap, size_t cls);
/* A heap's allocation slow path for class cls (HSM_BIN_LARGE: a large block): counted,
 * and the empty pages of other big classes kept too long go back. */
HSM_HIDDEN void hsm_cache_sweep_big(hsm_heap_t *heap);
static inline void hsm_heap_slow_tick(hsm_heap_t *heap, size_t cls) {
  if (HSM_UNLIKELY((++heap->slow_seq & (HSM_IDLE_PAGE_SLOW - 1)) == 0)) hsm_cache_sweep_big(heap);
  if (HSM_UNLIKELY(heap->idle_pages != 0)) hsm_heap_expire_idle(heap, cls);
}
HSM_HIDDEN void hsm_page_free_block(hsm_heap_t *heap, hsm_page_t *pg, hsm_block_t *b);
/* A run of n blocks of page pg (its heap's; head .. tail, linked as they came, marked
 * free, default mode) back onto its list in one step: its count of blocks out down by
 * n (a parked full page goes back on its queue, an empty one may go back). */
HSM_HIDDEN void hsm_page_return_run(hsm_heap_t *heap, hsm_page_t *pg, hsm_block_t *head,
                                    hsm_block_t *tail, uint32_t n);
HSM_HIDDEN void hsm_page_release(hsm_heap_t *heap, hsm_page_t *pg);
/* ---- free blocks of the big classes given back beyond a reserve (purge.c) ---- */
HSM_HIDDEN int hsm_purge_class(size_t bsize); /* a page of this block size purges */
HSM_HIDDEN uint32_t hsm_purge_reserve_of(size_t bsize);
HSM_HIDDEN void hsm_purge_reserves(hsm_heap_t *heap);
/* per class: the resident free blocks a heap keeps (sizeclass.c sets it with the class's
 * size) */
HSM_HIDDEN extern uint32_t hsm_class_reserve[HSM_CLASSES];
/* A run of n blocks (head .. tail) home to purging page pg: onto `local_free` while
 * the class's reserve has room, the rest purged onto `purged` (the caller counts them
 * in `used`). */
HSM_HIDDEN void hsm_purge_home(hsm_heap_t *heap, hsm_page_t *pg, hsm_block_t *head,
                               hsm_block_t *tail, uint32_t n);
HSM_HIDDEN void hsm_purge_leave(hsm_heap_t *heap, hsm_page_t *pg);
HSM_HIDDEN void hsm_purge_enter(hsm_heap_t *heap, hsm_page_t *pg);
HSM_HIDDEN int hsm_purge_pass_over(hsm_heap_t *heap, hsm_page_t *pg);
HSM_HIDDEN void hsm_purge_idle_class(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_purge_page_gone(hsm_heap_t *heap, hsm_page_t *pg);
HSM_HIDDEN hsm_block_t *hsm_checked_block(hsm_page_t *pg, void *p, const char *fn);
HSM_HIDDEN void hsm_heap_collect_empty(hsm_heap_t *heap);
HSM_HIDDEN void hsm_heap_free_empty_pages(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_page_set_direct(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_queue_remove(hsm_page_queue_t *q, hsm_page_t *pg);
HSM_HIDDEN void hsm_queue_push_front(hsm_page_queue_t *q, hsm_page_t *pg);
HSM_HIDDEN void *hsm_large_alloc(hsm_heap_t *heap, size_t size, int zero);
HSM_HIDDEN void *hsm_large_resize(void *p, size_t size);

/* ---- heaps and threads (heap.c), options (options.c) ---- */
HSM_HIDDEN hsm_heap_t *hsm_heap_get_slow(void);
HSM_HIDDEN hsm_heap_t *hsm_heap_absorb(hsm_heap_t *heap);
HSM_HIDDEN hsm_heap_t *hsm_heap_for_free(void);
HSM_HIDDEN void hsm_heap_maintenance(hsm_heap_t *heap);
HSM_HIDDEN void hsm_collect_abandoned(int force);
HSM_HIDDEN void hsm_heaps_lock(void);
HSM_HIDDEN void hsm_heaps_unlock(void);
HSM_HIDDEN hsm_heap_t *hsm_heaps_first(void);
HSM_HIDDEN void hsm_options_read(void);

/* ---- hot sizes and postponed free (hot.c) ---- */
HSM_HIDDEN void hsm_hot_heap_start(hsm_heap_t *heap);
HSM_HIDDEN void hsm_hot_apply_seeds(hsm_heap_t *heap);
HSM_HIDDEN void hsm_hot_sample(hsm_heap_t *heap, size_t size);
/* The block size of the hot class that would serve `size` (9..HSM_HOT_MAX_SIZE), and
 * the first 8-byte step such a class serves (its last is size / 8) */
HSM_HIDDEN size_t hsm_hot_class_size(size_t size, int packed);
HSM_HIDDEN unsigned hsm_hot_first_step(size_t class_size);
HSM_HIDDEN void hsm_hot_maintenance(hsm_heap_t *heap, uint64_t now);
HSM_HIDDEN int hsm_hot_keep(hsm_heap_t *heap, hsm_page_t *pg);
HSM_HIDDEN hsm_page_t *hsm_hot_take_kept(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN size_t hsm_hot_release_kept(hsm_heap_t *heap);
HSM_HIDDEN void hsm_hot_lock(void);
HSM_HIDDEN void hsm_hot_unlock(void);
typedef struct {
  size_t size;       /* block size; 0: slot unused */
  int seeded;        /* from HSMALLOC_HOT_SIZES */
  _Atomic int heaps; /* heaps with the class installed now */
  _Atomic uint64_t promotions, retirements;
} hsm_hot_slot_t;
HSM_HIDDEN extern hsm_hot_slot_t hsm_hot_slots[HSM_HOT_SLOTS];
static inline int hsm_is_hot(size_t cls) { return cls >= HSM_FIXED_CLASSES && cls < HSM_LANE_BASE; }

/* ---- call-site lanes (site.c; the fast path is operator new's, cxx.c) ---- */
/* The fixed class a lane class copies. */
static inline size_t hsm_lane_fixed_class(size_t cls) {
  return (cls - HSM_LANE_BASE) % HSM_SITE_LANE_CLASSES;
}
/* Call site `pc` missed slot `slot` of the heap's table: remember it with the next lane
 * of the class of `size`; returns what the slot now holds (site_base). */
HSM_HIDDEN unsigned hsm_site_learn(hsm_heap_t *heap, unsigned slot, uintptr_t pc, size_t size);
/* A known site of lane 1 or up asks for `size` (up to HSM_SITE_MAX): the class of it in
 * the site's lane, for the fast path. */
HSM_HIDDEN void hsm_site_resize(hsm_heap_t *heap, unsigned slot, size_t size);
/* What a lane-0 slot keeps for new's fast path (HSM_SITE_MALLOC or HSM_SITE_PLAIN). */
HSM_HIDDEN uint8_t hsm_site_lane0(const hsm_heap_t *heap, unsigned slot);
/* Whether operator new may use lanes in this heap (no secure mode, no default chain). */
HSM_HIDDEN void hsm_site_lanes_update(hsm_heap_t *heap);
/* by site_row + (size + 7) / 8 up to HSM_SITE_MAX: the fixed class serving new of a site
 * (row 0 as hsm_class_table, row HSM_SITE_ROW rounded up to 16); filled by
 * hsm_site_init after the size classes */
#define HSM_SITE_ROW (HSM_SITE_MAX / 8 + 1)
HSM_HIDDEN extern uint8_t hsm_site_class[2 * HSM_SITE_ROW];
HSM_HIDDEN void hsm_site_init(void);
/* module.c: 1 if the module holding pc was built by GCC only (its ELF .comment), so
 * that new may give it 8-byte aligned blocks; allocates nothing. `memo` (the caller's)
 * answers for the same module again without a lock while no dlclose intervened. */
HSM_HIDDEN int hsm_module_new_packed(uintptr_t pc, hsm_module_memo_t *memo);
HSM_HIDDEN extern _Atomic unsigned long hsm_module_unloads; /* dlcloses: memos stale */
/* every heap forgets the call sites in [lo, hi) (code dlclose unloaded: module.c) */
HSM_HIDDEN void hsm_sites_forget(uintptr_t lo, uintptr_t hi);

/* ---- the thread cache (cache.c), other heaps' blocks (remote.c) ---- */
/* the thread allocates class cls from its empty cache: the cache's whole bound */
HSM_HIDDEN void hsm_cache_grow(hsm_heap_t *heap, size_t cls);
/* How many blocks an empty cache takes from its page at a refill. */
HSM_HIDDEN uint32_t hsm_cache_refill_count(const hsm_page_t *cache);
/* no room for b (of pg, marked free and counted) in its class's cache: the cache is
 * flushed, then b pushed */
HSM_HIDDEN void hsm_cache_overflow(hsm_heap_t *self, hsm_page_t *pg, hsm_block_t *b);
HSM_HIDDEN void hsm_cache_flush_class(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_cache_flush_all(hsm_heap_t *heap);
/* Every batch of the transfer cache home, through this heap (hsmalloc_collect). */
HSM_HIDDEN void hsm_cache_flush_transfer(hsm_heap_t *heap);
/* ---- the transfer cache (transfer.c): whole batches of a class between threads ---- */
HSM_HIDDEN extern _Atomic int hsm_transfer_on; /* the process has made a second heap */
HSM_HIDDEN int hsm_transfer_put(hsm_heap_t *self, size_t cls, uint32_t count);
HSM_HIDDEN uint32_t hsm_transfer_take(hsm_heap_t *self, size_t cls, int wait);
HSM_HIDDEN uint32_t hsm_transfer_blocks(size_t cls);
HSM_HIDDEN uint32_t hsm_segment_free_resident(hsm_heap_t *heap, uint32_t enough);
HSM_HIDDEN void hsm_transfer_lock_all(void);
HSM_HIDDEN void hsm_transfer_unlock_all(void);
/* b (marked free) onto the cache, which has room for it (the link encoded: secure mode) */
static inline __attribute__((always_inline)) void hsm_cache_push(hsm_page_t *cache,
                                                                 hsm_block_t *b) {
  cache->used--;
  b->next = (hsm_block_t *)((uintptr_t)cache->free ^ hsm_remote_key);
  cache->free = b;
}
/* secure mode's free that failed a check, or whose cache has no room, or whose thread
 * has no heap: free.c */
HSM_HIDDEN void hsm_secure_free_slow(hsm_page_t *pg, hsm_block_t *b);
/* free of a small block of a secure page pg whose pointer is a block start among the
 * carved ones (the generic path took the others): the double-free check, the canary,
 * then onto this thread's cache as the default mode's fast path does, link encoded.
 * Every test comes before any write and fails into hsm_secure_free_slow with a tail
 * call (no stack frame here): a failed check goes on to the generic path, which makes
 * the same checks and says which failed; a thread without a heap (hsm_heap_empty's
 * caches have no room) takes the generic path too. Inlined into free's slow path
 * (free.c): a call of its own cost 5 instructions. */
static inline __attribute__((always_inline)) void hsm_secure_free(hsm_page_t *pg, hsm_block_t *b) {
  hsm_page_t *cache = (hsm_page_t *)((uint8_t *)hsm_tls_heap + pg->cache_off);
  if (HSM_UNLIKELY(b->mark == hsm_secure_mark(b) || !hsm_canary_ok(b, pg->block_size) ||
                   cache->used <= 1)) {
    hsm_secure_free_slow(pg, b);
    return;
  }
  b->mark = hsm_secure_mark(b);
  HSM_COUNT(cache->frees, 1);
  hsm_cache_push(cache, b);
}
/* Free a block of another heap through a per-destination batch (large blocks, and
 * frees by a thread that has no cache: `self` NULL pushes it alone). */
HSM_HIDDEN void hsm_remote_free(hsm_heap_t *self, hsm_page_t *pg, hsm_block_t *b);
/* A run of n blocks (head .. tail, linked) of heap dest's pages into its batch. */
HSM_HIDDEN void hsm_rbatch_add_run(hsm_heap_t *self, hsm_heap_t *dest, hsm_block_t *head,
                                   hsm_block_t *tail, uint32_t n, size_t bytes);
HSM_HIDDEN void hsm_rbatch_flush_all(hsm_heap_t *heap);
HSM_HIDDEN void hsm_heap_drain_remote(hsm_heap_t *heap);

/* Make pg the class's current page: the page the cache refills from (secure mode: the
 * page malloc pops from). */
static inline void hsm_direct_set(hsm_heap_t *heap, size_t cls, hsm_page_t *pg) {
  heap->direct[cls] = pg;
}
/* fast_direct: each class's cache, or hsm_page_empty everywhere while the fast path must
 * miss (a hot-size window, a default chain, secure mode; heap.c). */
HSM_HIDDEN void hsm_fast_direct_refresh(hsm_heap_t *heap);

/* An allocation's two counters, allocs[cls] += 1 and requested[cls] += size: on x86-64
 * each one `add` addressed from the heap and the class (the compiler computes the
 * address of each apart, one instruction more). malloc's and new's fast paths. */
static inline __attribute__((always_inline)) void hsm_count_class(hsm_heap_t *heap, size_t cls,
                                                                  size_t size) {
#if defined(__x86_64__)
  __asm__ volatile(
      "addq $1, %c[a](%[h],%[c],8)\n\taddq %[n], %c[r](%[h],%[c],8)"
      :
      : [h] "r"(heap), [c] "r"(cls), [n] "r"(size), [a] "i"(offsetof(hsm_heap_t, stats.allocs)),
        [r] "i"(offsetof(hsm_heap_t, stats.requested))
      : "memory");
#else
  HSM_COUNT(heap->stats.allocs[cls], 1);
  HSM_COUNT(heap->stats.requested[cls], size);
#endif
}

/* Pop the first block of the class's cache (not empty) for a request of `size` in class
 * `cls`: the list pop, the counters, and zeroing for calloc where the block is not fresh
 * OS memory. The default mode's (secure mode has its own: secure.c). Shared by the
 * generic fast path and the slow path; hsm_malloc's leaf has its own copy without
 * zeroing. */
static inline __attribute__((always_inline)) void *hsm_page_pop(hsm_heap_t *heap, hsm_page_t *pg,
                                                                size_t cls, size_t size, int zero) {
  hsm_block_t *b = pg->free;
  /* fresh zeroed OS memory: a block never handed out (its mark is its page's address
   * with the fresh bit: page_extend) of a page carved from zeroed memory */
  int fresh = zero && (b->mark & HSM_MARK_FRESH) &&
              ((const hsm_page_t *)(b->mark - HSM_MARK_FRESH))->span_zero;
  pg->free = b->next;
  b->mark = 0;
  pg->used++;
  HSM_COUNT(heap->stats.allocs[cls], 1);
  HSM_COUNT(heap->stats.requested[cls], size);
  if (zero) {
    if (fresh) b->next = NULL;
    else memset(b, 0, size);
  }
  return b;
}

static inline hsm_heap_t *hsm_heap_get(void) {
  hsm_heap_t *heap = hsm_tls_heap;
  if (HSM_LIKELY(heap != &hsm_heap_empty)) return heap;
  return hsm_heap_get_slow();
}

/* ---- huge blocks (huge.c) ---- */
/* *dirty: the bytes from the block's start that may hold old contents (0: all zero) */
HSM_HIDDEN void *hsm_huge_alloc(size_t size, size_t align, size_t *dirty);
HSM_HIDDEN void hsm_huge_cache_decay(uint64_t now, int force);
HSM_HIDDEN int64_t hsm_huge_cache_trim(int64_t want);
HSM_HIDDEN void hsm_huge_cache_lock(void);
HSM_HIDDEN void hsm_huge_cache_unlock(void);
HSM_HIDDEN void hsm_huge_free(hsm_huge_t *h);
HSM_HIDDEN hsm_huge_t *hsm_huge_of(const void *p, unsigned kind);

/* ---- core operations (alloc.c, free.c) ---- */
HSM_HIDDEN void *hsm_malloc(size_t size);
HSM_HIDDEN void *hsm_new_malloc(
    size_t size); /* operator new: 16-aligned unless HSMALLOC_PACKED=all */
HSM_HIDDEN void *hsm_calloc(size_t n, size_t size);
HSM_HIDDEN void *hsm_realloc(void *p, size_t size);
HSM_HIDDEN void hsm_free(void *p);
HSM_HIDDEN void *hsm_packed_alloc(size_t size); /* the packed classes' malloc (operator new) */
HSM_HIDDEN void *hsm_memalign(size_t align, size_t size);
HSM_HIDDEN size_t hsm_usable_size(const void *p);
HSM_HIDDEN int hsm_realloc_owned(void *p); /* hsm_owns, after free's checks */
HSM_HIDDEN int hsm_owns(const void *p);

static inline int hsm_is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* Text without libc's formatting and conversion code (vfprintf, strtol: hundreds of KiB
 * of libc pages a process would map just for hsmalloc's readings of /proc and /sys,
 * mimalloc-bench's small programs' max RSS): the decimal number at s (optional '-'),
 * *end after it (s when there is none); and a, b, c joined into dst (cap bytes). */
static inline long long hsm_parse_dec(const char *s, const char **end) {
  const char *p = s;
  int neg = *p == '-';
  if (neg) p++;
  unsigned long long v = 0;
  const char *digits = p;
  while (*p >= '0' && *p <= '9') {
    if (v < (1ull << 62)) v = v * 10 + (unsigned long long)(*p - '0');
    p++;
  }
  *end = p == digits ? s : p;
  return neg ? -(long long)v : (long long)v;
}
static inline void hsm_join(char *dst, size_t cap, const char *a, const char *b, const char *c) {
  size_t n = 0;
  const char *parts[3] = {a, b, c};
  for (int k = 0; k < 3; k++)
    for (const char *q = parts[k]; q != NULL && *q && n + 1 < cap; q++) dst[n++] = *q;
  dst[n] = '\0';
}

/* ---- pointers we do not own (foreign.c) ---- */
HSM_HIDDEN void hsm_foreign_free(void *p);
HSM_HIDDEN size_t hsm_foreign_usable_size(void *p);

/* ---- chains reached through the glibc API (chain_api.c), off the fast paths ---- */
/* p's unit is HSM_REG_CHAIN_*: free p if it is a chain's block (returns
 * HSM_REG_CHAIN_BLOCK), else return the kind the rest of the unit has. */
HSM_HIDDEN unsigned hsm_chain_free_routed(void *p, unsigned kind);
/* The same for the usable size: *kind becomes HSM_REG_CHAIN_BLOCK or the prior kind. */
HSM_HIDDEN size_t hsm_chain_usable_routed(const void *p, unsigned *kind);
HSM_HIDDEN void *hsm_chain_realloc_routed(void *p, size_t size, unsigned kind, int *done);
HSM_HIDDEN void *hsm_chain_alloc_default(struct hsmalloc_chain *c, size_t size, int zero);
HSM_HIDDEN void *hsm_chain_memalign_default(struct hsmalloc_chain *c, size_t align, size_t size);
HSM_HIDDEN void hsm_chain_thread_exit(hsm_heap_t *heap);
static inline int hsm_is_chain_kind(unsigned kind) {
  return kind == HSM_REG_CHAIN_SEG || kind == HSM_REG_CHAIN_MAP;
}

/* ---- statistics (stats.c), the SIGUSR2 dump (stats_signal.c) ---- */
HSM_HIDDEN void hsm_stats_at_exit(void);
/* hsmalloc_stats_get's work; `nonblocking`: only try the locks (a signal handler),
 * -1 when one is taken. */
HSM_HIDDEN int hsm_stats_collect(void *st, int nonblocking);
HSM_HIDDEN int hsm_heaps_trylock(void);
/* Heap number `index`'s hsmalloc_heap_stats_t, with the heap list locked; -1: none. */
HSM_HIDDEN int hsm_heap_row_locked(size_t index, void *row);
/* One heap's figures as an hsmalloc_stats_t (for hsmalloc_chain_stats of a chain that
 * has a heap of its own); allocated_now and overhead_bytes are left 0 (a heap's live
 * bytes are not known: frees are counted by the freeing thread). */
HSM_HIDDEN void hsm_stats_heap_fill(hsm_heap_t *h, void *st);
/* Chains (chain*.c) list themselves for the JSON dumps ("chains": [...]) by defining
 * it: 0 and *out, its number and name for the chain after *iter (NULL: the first),
 * non-zero past the last. A weak symbol: without chains, there is no such list. */
HSM_HIDDEN int hsm_chain_stats_next(void **iter, void *out, unsigned *id, char *name, size_t cap)
    __attribute__((weak));
/* Around a walk with hsm_chain_stats_next: the live-chain list is held (chains are not
 * created or destroyed meanwhile). `nonblocking` (a signal handler): only tried, -1
 * when taken. */
HSM_HIDDEN int hsm_chains_lock(int nonblocking) __attribute__((weak));
HSM_HIDDEN void hsm_chains_unlock(void) __attribute__((weak));
/* The node the chain holding p is bound to, -1: none or not a chain's block. */
HSM_HIDDEN int hsm_chain_node_of(const void *p) __attribute__((weak));
/* A dump asked for by SIGUSR2 that could not be written in the handler (a lock was
 * taken): written here, on the next maintenance. */
HSM_HIDDEN void hsm_stats_signal_pending(void);

/* ---- the event trace (trace.c) ---- */
enum {
  HSM_EV_SEG_NEW,
  HSM_EV_SEG_REUSE,
  HSM_EV_SEG_FREE,
  HSM_EV_PAGE_NEW,
  HSM_EV_PAGE_FREE,
  HSM_EV_PURGE,
  HSM_EV_MAP,
  HSM_EV_UNMAP,
  HSM_EV_PRESSURE
};
HSM_HIDDEN extern int hsm_trace_on;
HSM_HIDDEN void hsm_trace_start(void);
HSM_HIDDEN void hsm_trace_event(int kind, const hsm_heap_t *heap, const void *addr, uint64_t bytes);
HSM_HIDDEN void hsm_trace_flush(void);
#define HSM_TRACE(kind, heap, addr, bytes)                                    \
  do {                                                                        \
    if (HSM_UNLIKELY(hsm_trace_on)) hsm_trace_event(kind, heap, addr, bytes); \
  } while (0)

#include "pressure_numa.h" /* memory pressure (pressure.c), NUMA placement (numa.c) */

#endif
