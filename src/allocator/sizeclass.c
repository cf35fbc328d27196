/* Size classes: request size -> class, class -> block size and page span.
 *
 * Classes: 8; 16..128 in steps of 16; then 8 classes per doubling up to 128 KiB
 * (step = 1/8 of the lower power of two, so at most 12.5% internal waste above
 * 128 B). Sizes up to 1 KiB are looked up in a table (8-byte granularity) so that
 * exact classes can later be slotted in at run time; larger sizes are computed.
 */
#include "internal.h"

uint8_t hsm_class_table[HSM_CLASS_TABLE_MAX / 8 + 1];
size_t hsm_class_size[HSM_CLASSES];
uint8_t hsm_class_slices[HSM_CLASSES];
uint32_t hsm_cache_limit[HSM_CLASSES];
uint8_t hsm_class_lo8[HSM_CLASSES], hsm_class_hi8[HSM_CLASSES];

size_t hsm_class_of_computed(size_t size) {
  if (size <= 8) return 0;
  if (size <= 128) return (size + 15) >> 4;
  unsigned b = 63u - (unsigned)__builtin_clzl(size - 1); /* 2^b < size <= 2^(b+1) */
  size_t idx = (size - 1 - ((size_t)1 << b)) >> (b - 3);
  return 9 + (size_t)(b - 7) * 8 + idx;
}

static size_t class_size_of(size_t cls) {
  if (cls == 0) return 8;
  if (cls <= 8) return cls * 16;
  size_t j = cls - 9, b = 7 + j / 8, idx = j % 8;
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

void hsm_sizeclass_init(void) {
  for (size_t c = 0; c < HSM_CLASSES; c++) {
    hsm_class_size[c] = class_size_of(c);
    hsm_class_slices[c] = class_slices_of(hsm_class_size[c]);
    size_t limit = HSM_CACHE_BYTES / hsm_class_size[c];
    if (limit < HSM_CACHE_MIN_BLOCKS) limit = HSM_CACHE_MIN_BLOCKS;
    if (limit > HSM_CACHE_MAX_BLOCKS) limit = HSM_CACHE_MAX_BLOCKS;
    hsm_cache_limit[c] = (uint32_t)limit;
  }
  for (size_t c = 0; c < HSM_CLASSES; c++) {
    hsm_class_lo8[c] = 1; /* empty range unless the table maps sizes to c */
    hsm_class_hi8[c] = 0;
  }
  for (size_t i = HSM_CLASS_TABLE_MAX / 8 + 1; i-- > 0;) {
    size_t c = hsm_class_of_computed(i * 8);
    hsm_class_table[i] = (uint8_t)c;
    if (hsm_class_hi8[c] < hsm_class_lo8[c]) hsm_class_hi8[c] = (uint8_t)i;
    hsm_class_lo8[c] = (uint8_t)i;
  }
}
