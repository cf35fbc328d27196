/* Size classes: request size -> class, class -> block size and page span.
 *
 * Fixed classes: 16 (for requests of 0-8 bytes: a free block holds a link and a free
 * mark, check.c); 16..128 in steps of 8; then 8 classes per doubling up to 128 KiB
 * (step = 1/8 of the lower power of two, so at most 12.5% internal waste above
 * 128 B). Sizes up to 4 KiB are looked up in 8-byte steps (this table for the fixed
 * classes, each heap's class8 for its own, where hot classes are slotted in); larger
 * sizes are computed. Hot classes (hot.c) get their size here when first promoted.
 *
 * Packed classes and alignment. The 24, 40, ... 120-byte classes serve the sizes
 * 16k+1 .. 16k+8 (k = 1..7), and their blocks are 8-byte aligned; every other block is
 * 16-byte aligned (its size is a multiple of 16, pages start on 64 KiB). An object
 * that needs 16-byte alignment has a size that is a multiple of 16, so `new T`,
 * malloc(sizeof(T)) and malloc(n * sizeof(T)) of such a type never land in a packed
 * class; a request of 16k+1 .. 16k+8 bytes is at least 8-aligned, enough for any
 * object of that size (C++'s rule for operator new). C's wording since C17 ("any type
 * ... of size less than or equal to the size requested") asks more: a 16-byte long
 * double at the start of a 24-byte request; neither GCC nor clang assumes more than 8
 * of malloc, but libraries do (Eigen asserts glibc's 16), so malloc takes the packed
 * classes only with HSMALLOC_PACKED=1 or all (hsm_malloc_csize rounds them up to 16
 * otherwise, and each heap's fast_class, malloc's table, holds the 16-aligned class).
 * ::operator new(size_t) promises 16 (__STDCPP_DEFAULT_NEW_ALIGNMENT__) and clang
 * relies on it, so new takes them only from code built by GCC (module.c) unless
 * HSMALLOC_PACKED=all (alloc.c, hsm_new_malloc); HSMALLOC_PACKED=0: no packed class.
 * memalign and aligned new of 16 never take a packed class.
 */
#include "internal.h"

uint8_t hsm_class_table[HSM_TABLE8];
size_t hsm_class_size[HSM_CLASSES];
uint8_t hsm_class_slices[HSM_CLASSES];
uint32_t hsm_cache_limit[HSM_CLASSES];
uint16_t hsm_class_lo8[HSM_CLASSES], hsm_class_hi8[HSM_CLASSES];
int hsm_packed = 1;
int hsm_packed_new = 0;
int hsm_malloc_packed = 0;

size_t hsm_class_of_computed(size_t size) {
  if (size <= 8) return 0;
  if (size <= 16) return 1;
  if (size <= 128) return ((size + 7) >> 3) - 1;
  unsigned b = 63u - (unsigned)__builtin_clzl(size - 1); /* 2^b < size <= 2^(b+1) */
  size_t idx = (size - 1 - ((size_t)1 << b)) >> (b - 3);
  return 16 + (size_t)(b - 7) * 8 + idx;
}

static size_t class_size_of(size_t cls) {
  if (cls == 0) return 16;
  if (cls < 16) return (cls + 1) * 8;
  size_t j = cls - 16, b = 7 + j / 8, idx = j % 8;
  return ((size_t)1 << b) + (idx + 1) * ((size_t)1 << (b - 3));
}

/* Slices per page: one 64 KiB slice (>= 8 blocks) up to 8 KiB; above, the fewest
 * slices that hold at least two blocks (one above 64 KiB) and waste at most 1/8 of
 * the page, so that a thread's partly used pages of big classes stay small. */
static uint8_t class_slices_of(size_t bsize) {
  if (bsize * HSM_MIN_BLOCKS <= HSM_SLICE_SIZE) return 1;
  size_t min_blocks = bsize > HSM_SLICE_SIZE ? 1 : 2;
  for (size_t n = 1; n < HSM_SLICES; n++) {
    size_t bytes = n * HSM_SLICE_SIZE, blocks = bytes / bsize;
    if (blocks >= min_blocks && (bytes - blocks * bsize) * 8 <= bytes) return (uint8_t)n;
  }
  return (uint8_t)((bsize + HSM_SLICE_SIZE - 1) / HSM_SLICE_SIZE);
}

/* A hot class is as fine as the fixed classes around it: with packed classes every
 * 8-byte step up to 128 has a class of its own (a hot 24 must be a class of 24: one of
 * 32 would not serve it), above (or with HSMALLOC_PACKED=0) a step of 16. */
size_t hsm_hot_class_size(size_t size, int packed) {
  if (packed && size <= 128) return size <= 16 ? 16 : (size + 7) & ~(size_t)7;
  return (size + 15) & ~(size_t)15;
}

unsigned hsm_hot_first_step(size_t class_size) {
  return (unsigned)(class_size / 8 - (hsm_packed && class_size <= 128 ? 0 : 1));
}

/* Block size, page span and cache bound of class `cls`; a hot class of size `size`
 * (hsm_hot_class_size's, at most HSM_HOT_MAX_SIZE) serves the sizes of its 8-byte
 * table steps, hsm_hot_first_step(size) .. size / 8. */
/* A hot class holds most of a program's blocks: its page is the run of slices that
 * wastes the smallest share: 1 to 4 slices for blocks up to 4 KiB (2064-byte blocks
 * waste 2.4% of one slice, 0.27% of three), up to 15 above with at least two blocks
 * (65552-byte blocks: 14 in 15 slices, 6.6%; 262144: 2 in 8, nothing): two such pages
 * share a segment's 31 slices, where a 16-slice page had a segment, and its header's
 * resident pages, to itself (ghost-cells: 131 segments, 76 now). The tail a page never
 * carves is never touched. */
static uint8_t hot_slices_of(size_t bsize) {
  size_t best = 0, most = bsize > HSM_CLASS_TABLE_MAX ? 15 : 4;
  for (size_t n = 1; n <= most; n++) {
    size_t bytes = n * HSM_SLICE_SIZE;
    if (bytes / bsize < (bsize > HSM_CLASS_TABLE_MAX ? 2u : 1u)) continue;
    if (best == 0 || bytes % bsize * best < (best * HSM_SLICE_SIZE) % bsize * n) best = n;
  }
  return (uint8_t)(best ? best : (2 * bsize + HSM_SLICE_SIZE - 1) / HSM_SLICE_SIZE);
}

void hsm_class_set_size(size_t cls, size_t size) {
  hsm_class_size[cls] = size;
  hsm_class_slices[cls] = hsm_is_hot(cls) ? hot_slices_of(size) : class_slices_of(size);
  size_t limit = HSM_CACHE_BYTES / size;
  if (limit < HSM_CACHE_MIN_BLOCKS) limit = HSM_CACHE_MIN_BLOCKS;
  size_t most = size <= HSM_CACHE_TINY_MAX ? HSM_CACHE_MAX_BLOCKS_TINY : HSM_CACHE_MAX_BLOCKS;
  if (limit > most) limit = most;
  if (cls >= HSM_IDLE_CLASS_FIRST && cls < HSM_FIXED_CLASSES) limit = HSM_CACHE_BIG_BOUND;
  /* a hot class above 4 KiB: up to HSM_CACHE_HOT_BIG_BLOCKS blocks, about
   * HSM_CACHE_HOT_BIG_BYTES of them (rounded up) */
  if (hsm_is_hot(cls) && size > HSM_CLASS_TABLE_MAX) {
    size_t hot_big = (HSM_CACHE_HOT_BIG_BYTES + size - 1) / size;
    if (hot_big > HSM_CACHE_HOT_BIG_BLOCKS) hot_big = HSM_CACHE_HOT_BIG_BLOCKS;
    if (limit < hot_big) limit = hot_big;
  }
  hsm_cache_limit[cls] = (uint32_t)limit;
  hsm_class_reserve[cls] = hsm_purge_reserve_of(cls);
  if (hsm_is_hot(cls) && size <= HSM_CLASS_TABLE_MAX) {
    hsm_class_lo8[cls] = (uint16_t)hsm_hot_first_step(size);
    hsm_class_hi8[cls] = (uint16_t)(size / 8);
  }
}

void hsm_sizeclass_init(void) {
  for (size_t c = 0; c < HSM_CLASSES; c++) {
    hsm_class_lo8[c] = 1; /* empty range unless the table maps sizes to c */
    hsm_class_hi8[c] = 0;
  }
  hsm_packed = hsm_options.packed != HSM_PACKED_NONE;
  hsm_packed_new = hsm_options.packed == HSM_PACKED_ALL;
  hsm_malloc_packed = hsm_packing_malloc(hsm_options.packed);
  for (size_t c = 0; c < HSM_FIXED_CLASSES; c++) hsm_class_set_size(c, class_size_of(c));
  for (size_t c = HSM_LANE_BASE; c < HSM_CLASSES; c++)
    hsm_class_set_size(c, class_size_of(hsm_lane_fixed_class(c)));
  for (size_t i = HSM_TABLE8; i-- > 0;) {
    size_t size = i * 8;
    if (!hsm_packed && size > 16 && size <= 128) size = (size + 15) & ~(size_t)15;
    size_t c = hsm_class_of_computed(size);
    hsm_class_table[i] = (uint8_t)c;
    if (hsm_class_hi8[c] < hsm_class_lo8[c]) hsm_class_hi8[c] = (uint16_t)i;
    hsm_class_lo8[c] = (uint16_t)i;
  }
  hsm_site_init();
}
