/* hsmalloc: every tunable constant in one place.
 *
 * Address space is carved into 2 MiB-aligned segments; a segment is 32 slices of
 * 64 KiB; slice 0 holds the segment header (only its first pages are ever touched).
 * A page is a run of slices serving one size class (small) or one block (large).
 * Anything bigger than HS_LARGE_MAX is a huge block with its own mapping.
 */
#ifndef HS_CONFIG_H
#define HS_CONFIG_H

#define HS_SEGMENT_SHIFT   21                       /* 2 MiB: one x86-64 huge page */
#define HS_SEGMENT_SIZE    ((size_t)1 << HS_SEGMENT_SHIFT)
#define HS_SEGMENT_MASK    (HS_SEGMENT_SIZE - 1)
#define HS_SLICE_SHIFT     16                       /* 64 KiB */
#define HS_SLICE_SIZE      ((size_t)1 << HS_SLICE_SHIFT)
#define HS_SLICES          32                       /* per segment; slice 0 = header */
#define HS_SLICES_FREE_ALL 0xFFFFFFFEu              /* every slice but the header free */

/* Size classes: 8, then 16..128 step 16, then 8 classes per doubling up to
 * HS_SMALL_MAX (internal waste <= 12.5% above 128 B; every block is 16-aligned
 * except the 8-byte class). */
#define HS_SMALL_MAX       ((size_t)128 * 1024)
#define HS_CLASSES         89
#define HS_CLASS_TABLE_MAX 1024                     /* sizes looked up in a table */
#define HS_LARGE_MAX       ((size_t)15 * 64 * 1024) /* above: huge, own mapping (two of
                                                       the largest fit in a segment) */
#define HS_MIN_BLOCKS      8                        /* a small page holds >= 8 blocks */
#define HS_EXTEND_BYTES    4096                     /* carve fresh blocks 4 KiB at a time */

/* Statistics bins: one per small class, then large, then huge. */
#define HS_BIN_LARGE       HS_CLASSES
#define HS_BIN_HUGE        (HS_CLASSES + 1)
#define HS_BINS            (HS_CLASSES + 2)

/* Remote frees that do not go through a thread's per-class cache (large blocks)
 * are batched per destination heap before one atomic push; a batch holding a
 * large block goes at once, so an idle thread never sits on big memory. */
#define HS_RBATCH_SLOTS    16
#define HS_RBATCH_BLOCKS   128
#define HS_RBATCH_BYTES    HS_SMALL_MAX

/* A thread keeps up to this many bytes per class of blocks it freed for other
 * heaps, and allocates them first (4..1024 blocks per class). */
#define HS_CACHE_BYTES     ((size_t)16 * 1024)

/* Address registry: one byte per 2 MiB of the 47-bit user address space. */
#define HS_ADDRESS_BITS    47
#define HS_REGISTRY_SIZE   ((size_t)1 << (HS_ADDRESS_BITS - HS_SEGMENT_SHIFT))

/* Returning memory to the OS. */
#define HS_DEFAULT_DECAY_MS      1000   /* HSMALLOC_DECAY_MS */
#define HS_DEFAULT_CACHE_SEGS    32     /* HSMALLOC_CACHE_SEGMENTS: free segments kept mapped */
#define HS_DECAY_EVERY_SLOW      256    /* slow paths between decay checks */
#define HS_HUGE_HEADER           4096   /* huge block starts this far into its mapping */
#define HS_HUGE_CACHE            8      /* freed huge mappings kept for reuse */
#define HS_HUGE_CACHE_MAX        ((size_t)64 << 20)  /* ... if at most this big */

#define HS_MAX_ALIGN_SMALL       16     /* malloc's guaranteed alignment */

#endif
