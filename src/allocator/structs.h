/* hsmalloc's data structures (internal.h's map above them says how they fit): a free
 * block, a page, a segment, a huge block's header, a heap (with its queues, remote
 * batches, statistics, hot-size state and module memo), the global statistics and the
 * options. Only internal.h includes this file. */
#ifndef HSM_STRUCTS_H
#define HSM_STRUCTS_H

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
  uint32_t free_mask;       /* bit i: slice i is free */
  uint32_t touched_mask;    /* bit i: slice i may be resident (not purged since use) */
  uint32_t in_list;         /* linked in its heap's segment list */
  uint32_t offset_mask;     /* slices purged by hsm_offset_growth, not used since */
  uint64_t dirty_since_ms;  /* oldest free-but-touched slice */
  uint64_t offset_since_ms; /* the offset_mask slices were idle since then */
  hsm_heap_t *heap;
  int32_t numa_node;   /* node its memory is placed on (numa.c), -1: left to the kernel */
  uint32_t numa_bound; /* a placement was requested with mbind */
  struct hsm_segment_s *next, *prev;
  hsm_page_t pages[HSM_SLICES]; /* indexed by first slice */
  /* of a touched slice: its 4 KiB pages from the start that its pages carved (may be
   * resident), 0-16; a large page's slices count whole. After `pages`, so that a cached
   * segment's header reset keeps it. */
  uint8_t resident[HSM_SLICES];
  /* slice -> its page (one load on free): the segment's table is the row of its colour,
   * the bits of its address above the segment (hsm_slice_table). With one place for
   * every segment, the tables of all segments (2 MiB-aligned) fell in the same four sets
   * of a 32 KiB 8-way L1 and evicted each other: a fifth of free's table reads missed
   * in the live hand-over (cachegrind, six segments). All rows lie in the header's
   * second 4 KiB page, which `pages` and `resident` reach anyway. */
  _Alignas(64) hsm_page_t *slice_color[HSM_SLICE_COLORS][HSM_SLICES];
} hsm_segment_t;

typedef struct hsm_huge_s { /* header of a huge block's own mapping */
  uint32_t magic;
  uint32_t pad;
  void *map_base;
  size_t map_size;
  uint8_t *block;   /* start of the block */
  size_t usable;    /* usable bytes from `block` */
  size_t requested; /* secure mode: the request (its canary's place) */
  uint64_t made;    /* huge blocks made before it and it (huge.c: the newest one freed) */
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
  hsm_counter_t drain_areas;   /* secure mode: 4 KiB areas its drains fetched ahead */
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

_Static_assert(HSM_FIXED_CLASSES - HSM_IDLE_CLASS_FIRST <= 32,
               "a heap's idle_gave holds a bit for each class above 8 KiB");
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
  uint64_t sweep_ms; /* when hsm_cache_sweep_big last ran (0: not yet) */
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
  /* the same classes: slow_seq at the last sweep that found the class allocating, and
   * the log2 of how many sweeps its reserve waits for before it goes back (one more each
   * time the class allocates again soon after giving it back: cache.c); bit i of
   * idle_gave: class HSM_IDLE_CLASS_FIRST + i gave its reserve back and allocated nothing
   * since */
  uint32_t idle_seen[HSM_FIXED_CLASSES - HSM_IDLE_CLASS_FIRST];
  uint8_t idle_wait[HSM_FIXED_CLASSES - HSM_IDLE_CLASS_FIRST];
  uint32_t idle_gave;
  /* the same classes: when (coarse ms, low 32 bits | 1; 0: none) a page of theirs last
   * went back to its segment idle; bit i of gone_soon: the class made a page again within
   * HSM_GIVEBACK_SOON_MS of the last such, of gone_keep: twice in a row, and it keeps
   * its next such page's slices (purge.c, hsm_purge_page_made) */
  uint32_t gone_ms[HSM_FIXED_CLASSES - HSM_IDLE_CLASS_FIRST];
  uint32_t gone_soon, gone_keep;
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
   * them into): each serves the 16-byte step its block size ends; the key is the block
   * size / 16 (malloc's route for them, alloc.c: one compare a class) */
  uint32_t hot_big_key[HSM_HOT_PER_HEAP];
  uint8_t hot_big_cls[HSM_HOT_PER_HEAP];
  uint32_t hot_big_n;
  uint64_t sampled_ms;               /* when the last window began */
  uint8_t hot_on[HSM_HOT_SLOTS];     /* slot installed in this heap */
  uint8_t hot_pinned[HSM_HOT_SLOTS]; /* named by HSMALLOC_HOT_SIZES: never retired */
  uint8_t hot_cold[HSM_HOT_SLOTS];   /* consecutive windows below half the share */
  uint32_t hot_count;                /* slots installed */
  /* allocations of the fixed class that served slot s's size, when s was installed here
   * (hot.c, hsm_hot_superseded) */
  uint64_t hot_fixed_allocs[HSM_HOT_SLOTS];
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

#endif
