/* hsmalloc: heapscope's allocator. Used by LD_PRELOAD=libhsmalloc.so or by linking
 * with -lhsmalloc, it replaces the whole malloc family (and C++ new/delete).
 * This header adds what glibc's API cannot say: statistics and explicit collection.
 * (User arenas are planned, not built: see "Planned" in docs/hsmalloc.md.)
 * Options are environment variables, read at start-up (see docs/hsmalloc.md):
 *   HSMALLOC_STATS=1|json     print statistics at exit, to stderr or HSMALLOC_STATS_FILE
 *                             (appended; "%p" in the name becomes the process id)
 *   HSMALLOC_DECAY_MS=N       return free memory to the OS after N ms (-1: never; default 1000)
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

#define HSMALLOC_STAT_BINS 91   /* small size classes, then "large", then "huge" */

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
} hsmalloc_stats_t;

/* Merge every thread's counters into *out. Returns 0. */
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

#ifdef __cplusplus
}
#endif
#endif
