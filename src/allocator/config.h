/* hsmalloc: every tunable constant in one place.
 *
 * Address space is carved into 2 MiB-aligned segments; a segment is 32 slices of
 * 64 KiB; slice 0 holds the segment header (only its first pages are ever touched).
 * A page is a run of slices serving one size class (small) or one block (large).
 * Anything bigger than HSM_LARGE_MAX is a huge block with its own mapping.
 */
#ifndef HSM_CONFIG_H
#define HSM_CONFIG_H

#define HSM_SEGMENT_SHIFT   21 /* 2 MiB: one x86-64 huge page */
#define HSM_SEGMENT_SIZE    ((size_t)1 << HSM_SEGMENT_SHIFT)
#define HSM_SEGMENT_MASK    (HSM_SEGMENT_SIZE - 1)
#define HSM_SLICE_SHIFT     16 /* 64 KiB */
#define HSM_SLICE_SIZE      ((size_t)1 << HSM_SLICE_SHIFT)
#define HSM_SLICES          32          /* per segment; slice 0 = header */
#define HSM_SLICE_COLORS    8           /* places of a segment's slice table (structs.h) */
#define HSM_SLICES_FREE_ALL 0xFFFFFFFEu /* every slice but the header free */

/* Size classes: 16 for requests of 0-8 bytes (a free block holds a link and a free
 * mark), then 16..128 step 8, then 8 classes per doubling up to HSM_SMALL_MAX
 * (internal waste <= 12.5% above 128 B; every block is 16-aligned but those of the
 * packed classes 24, 40 .. 120, which are 8-aligned: sizeclass.c). */
#define HSM_SMALL_MAX       ((size_t)128 * 1024)
#define HSM_FIXED_CLASSES   96
#define HSM_CLASS_TABLE_MAX 4096 /* sizes looked up per heap in 8-byte steps (malloc's fast path) */

/* Hot sizes (hot.c): a size that takes at least 1/HSM_HOT_SHARE of a thread's sampled
 * allocations gets an exact class (the size rounded to 16) in that thread's heap. The
 * classes live in HSM_HOT_SLOTS slots after the fixed ones; a slot keeps its size for
 * the life of the process, so blocks of a retired class stay valid. */
#define HSM_HOT_SLOTS    16
#define HSM_HOT_PER_HEAP 8 /* hot classes installed in one heap at most */
#define HSM_HOT_MAX_SIZE ((size_t)256 * 1024)
/* Sizes above HSM_CLASS_TABLE_MAX (the 8-byte table) a window counts apart, rounded to
 * 16 (the first this many distinct ones); a hot class of such a size serves its 16-byte
 * step, found by a look through the heap's big hot classes (hot.c) */
#define HSM_HOT_BIG_SAMPLES  32
#define HSM_HOT_SAMPLE       1024 /* allocations sampled per window */
#define HSM_HOT_SHARE        8    /* hot: >= 1/8 of a window's allocations */
#define HSM_HOT_COLD_WINDOWS 2    /* windows below half that share before a class retires */
#define HSM_HOT_RESAMPLE_MS  1000 /* HSMALLOC_HOT_RESAMPLE_MS: a new window this often */
/* Postponed free: empty pages of a hot class a heap keeps, per class (at least one page,
 * when a page is bigger: a hot class above 64 KiB has pages of several slices). */
#define HSM_HOT_KEEP_BYTES ((size_t)256 * 1024)

/* Call-site lanes (site.c): operator new of up to HSM_SITE_MAX bytes from a call site
 * that was given lane l > 0 takes lane l's copy of the class (its own pages), so that
 * objects made at different places (different types, as a rule) do not share pages.
 * Lane classes follow the hot ones: HSM_SITE_LANE_CLASSES per lane, lanes 1 .. LANES-1. */
#define HSM_SITE_LANES        4
#define HSM_SITE_MAX          128
#define HSM_SITE_LANE_CLASSES 16  /* the fixed classes up to HSM_SITE_MAX */
#define HSM_SITE_SLOTS        256 /* call sites a heap remembers (direct-mapped by pc % 256) */
#define HSM_SITE_NONE         255 /* a slot's size that no new up to HSM_SITE_MAX asks */
#define HSM_SITE_MALLOC       254 /* a slot's size: lane 0, malloc's fast path (cxx.c) */
#define HSM_SITE_PLAIN        253 /* a slot's size: lane 0, 16-aligned: hsm_new_malloc (cxx.c) */
#define HSM_LANE_BASE         (HSM_FIXED_CLASSES + HSM_HOT_SLOTS)
#define HSM_CLASSES           (HSM_LANE_BASE + (HSM_SITE_LANES - 1) * HSM_SITE_LANE_CLASSES)

/* Above HSM_LARGE_MAX: huge, own mapping. A large block may take every slice of a
 * segment but the header's: freed, its slices serve large blocks of any size and
 * small pages, where a freed huge mapping serves only a request of nearly its size. */
#define HSM_LARGE_MAX  ((size_t)31 * 64 * 1024)
#define HSM_MIN_BLOCKS 8 /* a small page holds >= 8 blocks */
/* The classes above 8 KiB (fewer than HSM_MIN_BLOCKS blocks a slice: the fixed classes
 * from HSM_IDLE_CLASS_FIRST, 9216 B, to 128 KiB, 32 of them) keep their empty current
 * page for only HSM_IDLE_PAGE_SLOW of the heap's allocation slow paths, then give it
 * back to its segment (page.c): one kept for good per class held up to 32 pages of
 * idle carved blocks in realloc-large, slices no large block could use. */
#define HSM_IDLE_CLASS_FIRST 64
#define HSM_IDLE_PAGE_SLOW   16
/* A large allocation this long after the last sweep of the big classes' caches sweeps
 * them (large.c) */
#define HSM_SWEEP_STALE_MS 100
#define HSM_EXTEND_BYTES   4096 /* carve fresh blocks 4 KiB at a time */
/* Free blocks of the classes from HSM_PURGE_BLOCK_MIN (three whole OS pages at least)
 * beyond a heap's reserve of the class, HSMALLOC_FREE_RESERVE bytes of blocks (at least
 * HSM_PURGE_RESERVE_MIN blocks), have their whole OS pages given back (purge.c) */
#define HSM_PURGE_BLOCK_MIN     ((size_t)16 * 1024)
#define HSM_PURGE_RESERVE_BYTES ((long)32 << 20)
#define HSM_PURGE_RESERVE_MIN   4
/* A fixed class above 8 KiB gives its reserve back once 1 sweep of the caches (cache.c)
 * found it allocated nothing; each time it allocates again within HSM_IDLE_SOON waits of
 * its last allocation after that, it waits twice as many sweeps (up to
 * 2^HSM_IDLE_WAIT_MAX, 4,096 slow paths) */
#define HSM_IDLE_WAIT_MAX 8
#define HSM_IDLE_SOON     8
/* An idle class above 8 KiB whose pages, the last two times one went back to its
 * segment, were made again less than this long after (ms, coarse clock: the same tick)
 * keeps its next page's slices (purge.c, hsm_purge_page_made) */
#define HSM_GIVEBACK_SOON_MS 1
/* ... and a page made again this long after (ms) or later ends that; one in between
 * (a thread preempted for a time slice or two) leaves it as it was */
#define HSM_GIVEBACK_LATE_MS 32
/* secure mode: the bytes of empty pages of a class up to 8 KiB a heap keeps for reuse
 * (page.c): 8 pages of one slice */
#define HSM_SECURE_KEEP_BYTES ((size_t)512 * 1024)
/* A fixed class up to 8 KiB not allocated while its heap made this many allocations of
 * such classes gives its empty page back when another class takes a fresh page
 * (cache.c, hsm_cache_release_unused) */
#define HSM_UNUSED_ALLOCS ((uint64_t)1 << 20)

/* Statistics bins: one per small class, then large, then huge. */
#define HSM_BIN_LARGE HSM_CLASSES
#define HSM_BIN_HUGE  (HSM_CLASSES + 1)
#define HSM_BINS      (HSM_CLASSES + 2)

/* Remote frees that do not go through a thread's per-class cache (large blocks)
 * are batched per destination heap before one atomic push; a batch holding a
 * large block goes at once, so an idle thread never sits on big memory. */
#define HSM_RBATCH_SLOTS  16
#define HSM_RBATCH_BLOCKS 128
#define HSM_RBATCH_BYTES  HSM_SMALL_MAX

/* A thread's cache of a class (cache.c) holds up to HSM_CACHE_BYTES of blocks it freed
 * (4..1024 blocks a class; 2048 up to 32 bytes), and allocates them first;
 * HSM_CACHE_FREE_BYTES while the thread does not allocate the class, and a refill takes
 * twice that. (16 KiB until 2026-11-28: two threads that swap their blocks, hand-over, flushed a class whenever
 * the other's surplus of it passed 16 KiB, and each block went home, was drained and
 * refilled; with 64 KiB they reuse each other's blocks, as in TCMalloc.) A fixed class
 * above 8 KiB (from HSM_IDLE_CLASS_FIRST) keeps one block, and its cache goes home when HSM_IDLE_PAGE_SLOW
 * to twice that of the heap's slow paths pass without an allocation of the class
 * (cache.c's sweep, every HSM_IDLE_PAGE_SLOW slow paths), its page with it when that
 * empties it. */
#define HSM_CACHE_BYTES      ((size_t)64 * 1024)
#define HSM_CACHE_FREE_BYTES ((size_t)4 * 1024)
#define HSM_CACHE_MIN_BLOCKS 4
/* Every HSM_IDLE_PAGE_SLOW slow paths, in a process with one heap, a cache of a class up
 * to 8 KiB that holds this much or more beyond its class's live blocks sends the excess
 * home (cache.c, hsm_cache_trim); the threshold so that a class allocated and freed in small rounds keeps its
 * cache between them: espresso trims 2.7 M blocks in 4 s with it (+0.13% of its
 * instructions), 20 M with no threshold (+1.1%) */
#define HSM_CACHE_TRIM_BYTES ((size_t)4 * 1024)
/* At most 1024 blocks; 2048 for blocks up to 32 bytes (64 KiB of 32-byte blocks, 32 KiB of
 * 16), so that a round of 1600 (glibc-simple's) fits and no flush sends half of it home to
 * be refilled: a thread's caches hold at most 88 KiB more. 40-56 bytes keep 1024 until a
 * quiet run settles it: espresso's 48-byte cache at 1365 blocks showed a max RSS 60-110 KiB
 * higher in one batch of runs, level in another (BENCHMARKS.md, "the cache bound of the
 * small classes, measured again") */
#define HSM_CACHE_MAX_BLOCKS      1024
#define HSM_CACHE_MAX_BLOCKS_TINY 2048
#define HSM_CACHE_TINY_MAX        32
#define HSM_CACHE_BIG_BOUND       1
/* A hot class above 4 KiB (hot.c) is allocated and freed in turn at random (a solver's
 * arrays, replaced one by one): its cache's fill wanders like a random walk, and with
 * HSM_CACHE_BYTES's 4 blocks of 16 KiB it hit its bound or ran empty at one free or
 * malloc in 16 (the ghost-layer mix: a refill or a flush of ~300 instructions each).
 * Such a class's cache holds up to HSM_CACHE_HOT_BIG_BLOCKS blocks, HSM_CACHE_HOT_BIG_BYTES
 * of them at most (rounded up: 16 of 65,552 bytes, 8 of 131,088, 4 of 256 KiB); a
 * thread that only frees the class still holds HSM_CACHE_FREE_BYTES' worth. */
#define HSM_CACHE_HOT_BIG_BLOCKS 16
#define HSM_CACHE_HOT_BIG_BYTES  ((size_t)1 << 20)
/* The transfer cache (transfer.c): per fixed class up to 8 KiB, up to
 * HSM_TRANSFER_SLOTS batches that threads' caches overflowed, at most
 * HSM_TRANSFER_BYTES of blocks a class (blocks there hold their pages). */
#define HSM_TRANSFER_CLASSES HSM_IDLE_CLASS_FIRST
#define HSM_TRANSFER_SLOTS   16
#define HSM_TRANSFER_BYTES   ((size_t)64 * 1024)

/* Heap objects are carved from mappings of this size (never freed). */
#define HSM_HEAP_POOL_CHUNK ((size_t)1 << 20)

/* Address registry: one byte per 2 MiB of the 47-bit user address space. */
#define HSM_ADDRESS_BITS  47
#define HSM_REGISTRY_SIZE ((size_t)1 << (HSM_ADDRESS_BITS - HSM_SEGMENT_SHIFT))

/* Returning memory to the OS. */
#define HSM_DEFAULT_DECAY_MS   1000 /* HSMALLOC_DECAY_MS */
#define HSM_DEFAULT_CACHE_SEGS 32   /* HSMALLOC_CACHE_SEGMENTS: free segments kept mapped */
#define HSM_SEGMENT_CACHE_MAX  64   /* ... at most, whatever the variable says */
#define HSM_DECAY_EVERY_SLOW   256  /* slow paths between decay checks */
#define HSM_HUGE_HEADER        4096 /* huge block starts this far into its mapping */
/* Freed huge mappings are kept as pieces of resident memory (huge.c): at most this many
 * pieces, and max(HSM_HUGE_KEEP, the huge bytes in use / HSM_HUGE_KEEP_SHARE) resident
 * bytes (a quarter of that under some memory pressure, none under high pressure). */
#define HSM_HUGE_CACHE      32
#define HSM_HUGE_KEEP       ((size_t)64 << 20)
#define HSM_HUGE_KEEP_SHARE 2
/* Cached segments and huge mappings are purged after the decay delay, and unmapped
 * once idle this long. */
#define HSM_UNMAP_IDLE_MS(decay_ms) (8 * (decay_ms) + 1000)

/* Fresh memory committed while more than this much freed memory sits resident and
 * idle (free slices, cached segments and huge mappings) gives back as much of it
 * (segment.c, hsm_offset_growth): max(HSM_IDLE_MIN, in use / HSM_IDLE_SHARE). "In use"
 * counts a small page's slices whole, though only its carved part is resident, so a
 * small heap reads several times its size (GROMACS: ~10 MiB of pages, 4.8 resident).
 * 2 MiB and 1/16 until 2026-11-29: a small heap kept its freed large blocks (a buffer
 * grown by copies) resident beside the fresh slices of the next one, 0.8 MiB there. */
#define HSM_IDLE_MIN   ((size_t)256 << 10)
#define HSM_IDLE_SHARE 32
/* ... plus the bytes so given back and then committed again, when they are at least
 * this share (%) of those given back (both halved every HSM_IDLE_HALF_MS) */
#define HSM_IDLE_REFAULT_PCT 75
#define HSM_IDLE_HALF_MS     1000

/* ---- adaptive return of memory (pressure.c) ----
 * The node's (and the cgroup's) memory headroom and the kernel's pressure stall
 * figures are read at most every HSM_PRESSURE_CHECK_MS, off the fast path (segment
 * release, page retirement, maintenance), and turned into a level that scales the
 * decay: keep free memory while there is room, give it back faster as room runs out. */
#define HSM_PRESSURE_CHECK_MS 100 /* HSMALLOC_PRESSURE_CHECK_MS: files read at most this often */
/* Headroom (available / limit) in per mille below which each level starts. */
#define HSM_HEADROOM_LOW      300 /* level 1 (some): decay = HSMALLOC_DECAY_MS */
#define HSM_HEADROOM_HIGH     150 /* level 2 (high): free pages and segments purged at once */
#define HSM_HEADROOM_CRITICAL 50  /* level 3 (critical): the cache is emptied too */
/* /proc/pressure/memory "some avg10" (percent x 100) at which levels 2 and 3 start. */
#define HSM_PSI_HIGH       200  /* 2% of the last 10 s stalled on memory */
#define HSM_PSI_CRITICAL   1000 /* 10% */
#define HSM_DECAY_RELAXED  8  /* level 0 (none): decay x 8, nothing returned while there is room */
#define HSM_DECAY_HIGH_DIV 10 /* level 2: decay / 10 for what the owner purges at maintenance */
#define HSM_PRESSURE_HOLD_MS \
  3000 /* HSMALLOC_PRESSURE_HOLD_MS: level 2 or more, once seen, kept this long */

/* ---- NUMA placement (numa.c) ---- */
#define HSM_NUMA_MAX_NODES 64 /* nodes hsmalloc tells apart (bit masks of one word) */

#define HSM_MAX_ALIGN_SMALL 16 /* malloc's guaranteed alignment */

/* Chains (chain*.c): arenas over a caller's buffer or the chain's own OS segments.
 * A chain cuts its memory into 4 KiB pages; a run of pages (a span) serves one fixed
 * size class, or is one big block (above HSM_SMALL_MAX). */
#define HSM_CHAIN_PAGE_SHIFT 12
#define HSM_CHAIN_PAGE       ((size_t)1 << HSM_CHAIN_PAGE_SHIFT)
#define HSM_CHAIN_BUF_ALIGN  16 /* a caller's buffer must be aligned to this */
#define HSM_CHAIN_SPAN_MAX   32 /* pages of a small class's span, at most */
/* The two-level map of 2 MiB units that hold caller buffers: 4096 units (8 GiB) per
 * second-level table, made on first use and never freed. */
#define HSM_CHAIN_MAP_L2_BITS 12
#define HSM_CHAIN_MAP_L1_BITS (HSM_ADDRESS_BITS - HSM_SEGMENT_SHIFT - HSM_CHAIN_MAP_L2_BITS)

#endif
