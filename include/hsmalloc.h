/* hsmalloc: heapscope's allocator. Used by LD_PRELOAD=libhsmalloc.so or by linking
 * with -lhsmalloc, it replaces the whole malloc family (and C++ new/delete).
 * This header adds what glibc's API cannot say: statistics, explicit collection, and
 * chains (allocation arenas over any memory, below).
 * Options are environment variables, read at start-up (see docs/hsmalloc.md):
 *   HSMALLOC_STATS=1|json     print statistics at exit, to stderr or HSMALLOC_STATS_FILE
 *                             (appended; "%p" in the name becomes the process id)
 *   HSMALLOC_DECAY_MS=N       return free memory to the OS after N ms (-1: never; default 1000),
 *                             scaled by memory pressure (x8 with room, /10 or at once without)
 *   HSMALLOC_PRESSURE=0       a fixed decay: do not read memory pressure (default 1)
 *   HSMALLOC_NUMA=auto|0|1    place segments on the taking thread's node (auto: with several)
 *   HSMALLOC_STATS_SIGNAL=0   no statistics dump on SIGUSR2 (default: dump when HSMALLOC_STATS is set)
 *   HSMALLOC_TRACE=FILE       the allocator's event trace (segments, pages, purges), "%p": pid
 *   HSMALLOC_CACHE_SEGMENTS=N free 2 MiB segments kept mapped for reuse (default 32)
 *   HSMALLOC_HUGEPAGES=1      ask for transparent huge pages; purge only whole segments
 *   HSMALLOC_HOT_SIZES=528,1040 or =@FILE   exact classes (size rounded to 16) for these
 *                             sizes in every thread from the first allocation (at most 8,
 *                             each 1..4096; anything else is a warning and ignored)
 *   HSMALLOC_HOT_DETECT=0     do not look for hot sizes at run time (default 1)
 *   HSMALLOC_HOT_RESAMPLE_MS=N  look again this often (default 1000; -1: first window only)
 */
#ifndef HSMALLOC_H
#define HSMALLOC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HSMALLOC_STAT_BINS 98   /* small size classes, then "large", then "huge" */

typedef struct {
  uint64_t size;       /* block size of the class (0 for the large and huge bins) */
  uint64_t allocs;     /* allocations served by the bin since start */
  uint64_t frees;
  uint64_t live;       /* allocs - frees */
} hsmalloc_bin_stats_t;

#define HSMALLOC_HOT_MAX 16 /* hot classes a process can have (distinct sizes) */

/* One hot class (or, as `rest`, every allocation outside hot classes). */
typedef struct {
  uint64_t size;               /* block size: the hot size rounded to 16 (0 in `rest`) */
  uint32_t heaps;              /* heaps (threads) serving the size with this class now */
  uint32_t seeded;             /* named by HSMALLOC_HOT_SIZES */
  uint64_t promotions, retirements; /* times a heap installed / retired the class */
  uint64_t allocs, frees, live;
  uint64_t slow_allocs;        /* allocations that left the fast path */
  double fast_path_hit_rate;   /* 1 - slow_allocs / allocs */
  uint64_t requested_bytes;    /* sum of the requested sizes */
  uint64_t allocated_bytes;    /* sum of the usable sizes handed out */
  double fragmentation;        /* allocated_bytes / requested_bytes */
  uint64_t kept_pages;         /* empty pages held by postponed free now */
} hsmalloc_hot_stats_t;

typedef struct {
  /* bytes */
  uint64_t requested_total;     /* sum of requested sizes, all allocations since start */
  uint64_t allocated_total;     /* sum of usable sizes handed out since start */
  uint64_t allocated_now;       /* usable bytes of live blocks */
  uint64_t page_bytes, page_bytes_peak;   /* bytes of pages holding small/large blocks */
  uint64_t huge_bytes, huge_bytes_peak;   /* bytes of huge blocks (own mappings) */
  uint64_t committed, committed_peak;     /* mapped and not returned to the OS (upper bound of RSS) */
  uint64_t reserved, reserved_peak;       /* address space mapped */
  double fragmentation;         /* allocated_total / requested_total (>= 1) */
  /* operations */
  uint64_t allocs, frees;
  uint64_t slow_allocs;         /* allocations that left the fast path */
  double fast_path_hit_rate;    /* 1 - slow_allocs / allocs */
  uint64_t remote_frees;        /* blocks freed by a thread other than their heap's owner */
  uint64_t remote_pushes;       /* batches of remote frees pushed (one atomic each) */
  uint64_t queue_drains;        /* non-empty remote queues emptied by their owner */
  uint64_t drained_blocks;
  uint64_t orphan_frees;        /* frees by exiting threads that had given up their heap */
  uint64_t foreign_frees;       /* pointers hsmalloc did not allocate, handed back to glibc */
  uint64_t purges, purged_bytes;          /* memory returned to the OS */
  /* structure */
  uint64_t segments, segments_peak, segments_cached;
  uint64_t pages, pages_peak, huge_blocks;
  uint64_t heaps, heaps_abandoned;
  hsmalloc_bin_stats_t bins[HSMALLOC_STAT_BINS]; /* fixed classes (hot classes: below) */
  uint64_t hot_classes;         /* rows used in hot[] */
  hsmalloc_hot_stats_t hot[HSMALLOC_HOT_MAX];
  hsmalloc_hot_stats_t rest;    /* the same figures for all other allocations */
  /* ---- the allocator spy (the figures of the MPC allocator's `chain --all -stat`);
   * hsmalloc_chain_stats fills the same fields for one chain. New fields go at the end. */
  uint64_t reallocs;            /* realloc calls with a block and a nonzero size */
  uint64_t real_bytes;          /* memory that may be resident: committed + heap objects */
  uint64_t virtual_bytes;       /* address space mapped: reserved + heap objects */
  uint64_t overhead_bytes;      /* real_bytes - allocated_now: all that is not a live block,
                                   = metadata + free_in_pages + free_not_returned */
  uint64_t metadata_bytes;      /* segment headers and heap objects */
  uint64_t free_in_pages;       /* page_bytes - live blocks in pages: free blocks, uncarved
                                   space, page tails */
  uint64_t free_not_returned;   /* committed outside pages and headers: free slices, cached
                                   segments and huge mappings, huge blocks' mapping slack */
  uint64_t rfq_blocks, rfq_bytes; /* blocks and bytes received through remote-free queues */
  /* memory pressure (the adaptive decay) */
  int32_t pressure_enabled;     /* HSMALLOC_PRESSURE */
  int32_t pressure_level;       /* 0 none, 1 some, 2 high, 3 critical */
  int64_t decay_ms_now;         /* the decay the level gives now (-1: never) */
  int64_t headroom_permille;    /* smallest available / limit over node and cgroup (1000: none read) */
  int64_t psi_some_avg10_x100;  /* /proc/pressure/memory "some avg10" x 100 (-1: none) */
  uint64_t pressure_limit, pressure_available; /* bytes of the tightest limit */
  uint64_t pressure_checks, pressure_level_changes;
  uint64_t pressure_purges;     /* pages and segments purged at once because of pressure */
  /* NUMA placement */
  uint32_t numa_nodes, numa_placing; /* nodes of the machine; placement on (HSMALLOC_NUMA) */
  uint64_t numa_binds, numa_bind_failures; /* mbind calls */
  uint64_t numa_reused_same_node, numa_reused_other_node; /* cached segments taken */
  int32_t numa_node;            /* a chain: the node it is bound to; -1: none (the process: -1) */
  /* of the purges: those that kept fresh memory from growing the resident set while
   * freed memory sat idle, and the bytes of them committed again later */
  uint64_t growth_purges, growth_purged_bytes, growth_refaulted_bytes;
  /* heaps of running threads whose frees of their own blocks since they last counted
   * them are not in `frees` yet (every live thread's but the reader's; all of them in
   * a signal's dump): while nonzero, frees is a lower bound, live and allocated_now
   * upper bounds (docs/hsmalloc.md, "How current the frees figures are") */
  uint64_t heaps_frees_behind;
  /* the transfer cache: blocks threads' caches put into it, and took from it (whole
   * batches handed between threads without going home; docs/hsmalloc.md) */
  uint64_t transfer_out, transfer_in;
} hsmalloc_stats_t;

/* One thread heap (a heap outlives its thread: an exited thread's heap is abandoned and
 * adopted by the next new thread). Operation counts are what this heap's thread did;
 * memory figures are what the heap holds. */
typedef struct {
  uint32_t id;                  /* 0, 1, ... in creation order */
  uint32_t state;               /* 1 owned by a live thread, 2 abandoned */
  uint64_t allocs, reallocs;
  uint64_t frees;               /* frees done by this thread (of any heap's blocks); for a
                                   live thread other than the reader, without its frees
                                   of its own blocks since it last counted them
                                   (docs/hsmalloc.md, "Statistics") */
  uint64_t slow_allocs;
  double fast_path_hit_rate;
  uint64_t requested_bytes, allocated_bytes; /* since start; allocated = usable sizes */
  double fragmentation;         /* allocated_bytes / requested_bytes */
  uint64_t remote_frees;        /* blocks of other heaps this thread sent home (its frees,
                                   and at hsmalloc_collect the transfer cache's) */
  uint64_t remote_pushes;       /* batches it pushed to their owners */
  uint64_t rfq_drains, rfq_blocks, rfq_bytes; /* its remote-free queue: drains, what came in */
  uint64_t segments;            /* segments the heap holds */
  uint64_t real_bytes;          /* of which may be resident (headers and touched slices) */
  uint64_t virtual_bytes;       /* segments x 2 MiB */
  uint64_t page_bytes;          /* in pages (small and large blocks) */
  uint64_t transfer_out;        /* blocks its caches put into the transfer cache */
  uint64_t transfer_in;         /* blocks its caches took from it */
  uint64_t drain_areas;         /* secure mode: 4 KiB areas of the blocks in its queue that
                                   its drains fetched ahead of their walk */
} hsmalloc_heap_stats_t;

/* Heap number `index` (0 .. heaps-1) into *out: 0, or -1 when there is no such heap. */
int hsmalloc_heap_stats_get(size_t index, hsmalloc_heap_stats_t *out);
/* The calling thread's heap: 0, or -1 when it has none yet. */
int hsmalloc_heap_stats_self(hsmalloc_heap_stats_t *out);

/* Where the memory holding p is placed (NUMA). Returns 0 (-1 when out is NULL). */
typedef struct {
  int nodes;          /* nodes of the machine */
  int placing;        /* hsmalloc asks for placement (HSMALLOC_NUMA) */
  int segment_node;   /* node recorded in p's segment header, or the node p's chain is
                         bound to (hsmalloc_chain_bind_node); -1: none */
  int policy;         /* the kernel's policy for p's page (get_mempolicy): 0 default, 1 preferred */
  int policy_node;    /* its node, -1: none */
  int resident_node;  /* node the page is on now (move_pages), -1: not resident */
  int thread_node;    /* node of the CPU the caller runs on */
} hsmalloc_numa_info_t;
int hsmalloc_numa_info(const void *p, hsmalloc_numa_info_t *out);

/* Merge every thread's counters into *out. Returns 0. The calling thread's and exited
 * threads' frees are exact; another live thread's may lag (docs/hsmalloc.md). */
int hsmalloc_stats_get(hsmalloc_stats_t *out);
/* Human-readable report. */
void hsmalloc_stats_print(FILE *out);
/* The same as one JSON object (keys as in hsmalloc_stats_t, "bins" a list). */
void hsmalloc_stats_print_json(FILE *out);
/* Return free memory to the OS now; returns the number of bytes purged or unmapped. */
size_t hsmalloc_collect(void);
/* Nonzero when p was allocated by hsmalloc (and not freed since). */
int hsmalloc_owns(const void *p);

/* Explicit entry points (same as malloc & co. when hsmalloc is the process allocator). */
void *hsmalloc_malloc(size_t size);
void *hsmalloc_calloc(size_t n, size_t size);
void *hsmalloc_realloc(void *p, size_t size);
void *hsmalloc_memalign(size_t align, size_t size);
void hsmalloc_free(void *p);
size_t hsmalloc_usable_size(const void *p);


/* ---- Chains: allocation arenas over any memory source (docs/hsmalloc.md, "Chains") ----
 * A chain allocates from a caller's buffer (mmap'd, mlock'd, shm_open'd, static: any
 * 16-byte aligned region) or from OS memory of its own. Its blocks are freed by
 * hsmalloc_chain_free or by plain free() (realloc() and malloc_usable_size() work too)
 * from any thread, or all at once by hsmalloc_chain_reset. A chain never falls back to
 * other memory: when it is full an allocation returns NULL with errno ENOMEM (a
 * throwing `new` runs the new-handler, then throws std::bad_alloc).
 * Without HSMALLOC_CHAIN_SHARED a chain belongs to the thread that created it: only
 * that thread allocates, reallocates, resets or makes it its default (any other
 * thread doing so aborts with a one-line message); any thread may free its blocks.
 * A chain's pointer passed to any function must not have been destroyed.
 * A NULL chain means the thread's ordinary allocation (what malloc would do). */
typedef struct hsmalloc_chain hsmalloc_chain_t;
#define HSMALLOC_CHAIN_SHARED 1u /* several threads use it: locked */
/* A caller's buffer of at least this many bytes always holds the chain's bookkeeping
 * (about 4 KiB, plus 8 bytes per 4 KiB page) and one 4 KiB page. */
#define HSMALLOC_CHAIN_MIN_SIZE 16384u

/* buf NULL: OS memory, size a soft limit (0: none; rounded up to 2 MiB segments).
 * buf non-NULL: size bytes there. NULL and errno: EINVAL (unknown flags, buf not 16-byte
 * aligned, size 0, range past the address space), ENOSPC (no room for the bookkeeping
 * and one 4 KiB page), EBUSY (the buffer overlaps another chain's memory), ENOMEM. */
hsmalloc_chain_t *hsmalloc_chain_create(void *buf, size_t size, unsigned flags);
/* Blocks are 16-byte aligned, except sizes 17-128 whose remainder mod 16 is 1-8: those
 * are 8-byte aligned and packed (24, 40, ... 120 bytes: a 20-byte object takes 24, as
 * in an application's pool). hsmalloc_chain_aligned_alloc(c, 16, n) for 16 always;
 * malloc in a default-chain scope keeps malloc's 16. */
void *hsmalloc_chain_malloc(hsmalloc_chain_t *c, size_t size);
void *hsmalloc_chain_calloc(hsmalloc_chain_t *c, size_t n, size_t size);
/* p NULL: malloc; size 0: free, NULL. The block stays in its chain, in place when the
 * new size fits; NULL and ENOMEM (p untouched) when the chain is full. */
void *hsmalloc_chain_realloc(hsmalloc_chain_t *c, void *p, size_t size);
/* align a power of two (else NULL, EINVAL). */
void *hsmalloc_chain_aligned_alloc(hsmalloc_chain_t *c, size_t align, size_t size);
/* p must be a block of c: a block of another chain, or not of a chain, aborts with a
 * one-line message. */
void hsmalloc_chain_free(hsmalloc_chain_t *c, void *p);
/* Free-all: every block of the chain at once (OS memory is kept for reuse). */
void hsmalloc_chain_reset(hsmalloc_chain_t *c);
/* Release the chain (and its OS memory; a caller's buffer is the caller's again). Any
 * thread may destroy it once no thread uses it; destroying a chain that is another
 * thread's default aborts. The calling thread's default goes back to its heap. */
void hsmalloc_chain_destroy(hsmalloc_chain_t *c);
/* Make c the calling thread's default: malloc, calloc, realloc(NULL, n), aligned
 * allocation, new, and library code (strdup, std::string, ...) allocate in c until
 * the previous default is restored. Returns the previous default (NULL: the thread's
 * heap); nest by restoring what it returned. Other threads are not affected. */
hsmalloc_chain_t *hsmalloc_chain_set_default(hsmalloc_chain_t *c);
/* The chain's figures in hsmalloc_stats_t (bins: fixed classes, then big blocks in the
 * "large" row; segments: regions; pages: spans; reserved, virtual_bytes: region bytes;
 * committed, real_bytes: bookkeeping and pages handed out at least once; overhead_bytes
 * = metadata_bytes + free_in_pages + free_not_returned; what each field means for a
 * chain, and which are 0 and why: docs/hsmalloc.md, "Chains in the statistics"). A
 * reset counts every live block as freed. The same figures are in the JSON dumps.
 * Returns 0; -1 (EINVAL) when out is NULL. c NULL: hsmalloc_stats_get. */
int hsmalloc_chain_stats(hsmalloc_chain_t *c, hsmalloc_stats_t *out);
/* A name for the chain in the statistics dumps (HSMALLOC_STATS=json, SIGUSR2) and
 * `heapscope alloc-stats` (copied, at most 31 bytes; NULL: back to its number, the
 * default: chains are numbered 1, 2, ... in creation order). Returns 0; -1 (EINVAL)
 * for a NULL chain. Every live chain is in the dumps, named or not. */
int hsmalloc_chain_set_name(hsmalloc_chain_t *c, const char *name);
/* Place the chain's memory on NUMA node `node` (-1: back to the kernel's default):
 * its OS segments, those it maps from now on, and the whole pages of a caller's
 * buffer (mbind, preferred: the kernel falls back to another node when this one is
 * full); pages already touched are moved. hsmalloc_numa_info reports the node for the
 * chain's blocks. Call it right after hsmalloc_chain_create. Returns 0; -1 and errno
 * EINVAL (no such node, NULL chain) or the kernel's mbind error (the chain stays as it
 * was recorded before). Who may call: as for allocation. */
int hsmalloc_chain_bind_node(hsmalloc_chain_t *c, int node);

#ifdef __cplusplus
}
#endif
#endif
