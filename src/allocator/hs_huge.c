/* Huge blocks (above HS_LARGE_MAX): one mapping each, its header in the first page.
 * The block starts in the mapping's first 2 MiB unit, so masking finds the header;
 * for alignments of 2 MiB and more the header sits in the unit just before the
 * block and the registry says so (HS_REG_HUGE_PREV). */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>

#include "hs_internal.h"

static size_t round_page(size_t n) { return (n + 4095) & ~(size_t)4095; }

void *hs_huge_alloc(size_t size, size_t align) {
  if (size > ((size_t)1 << HS_ADDRESS_BITS)) return NULL;
  hs_huge_t *h;
  uint8_t *block;
  size_t map_size;
  if (align < HS_SEGMENT_SIZE) {
    size_t offset = align > HS_HUGE_HEADER ? align : HS_HUGE_HEADER;
    map_size = round_page(offset + size);
    h = hs_os_map_aligned(map_size, HS_SEGMENT_SIZE);
    if (h == NULL) return NULL;
    block = (uint8_t *)h + offset;
    hs_registry_set(block, HS_REG_HUGE);
  } else {
    size_t want = HS_SEGMENT_SIZE + round_page(size);
    int err = errno;
    uint8_t *raw = mmap(NULL, want + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    errno = err;
    if (raw == MAP_FAILED) return NULL;
    block = (uint8_t *)(((uintptr_t)raw + HS_SEGMENT_SIZE + align - 1) & ~(uintptr_t)(align - 1));
    uint8_t *base = block - HS_SEGMENT_SIZE;
    if (base > raw) munmap(raw, (size_t)(base - raw));
    size_t tail = (size_t)((raw + want + align) - (base + want));
    if (tail) munmap(base + want, tail);
    errno = err;
    h = (hs_huge_t *)base;
    map_size = want;
    hs_stat_add(&hs_gstats.reserved, &hs_gstats.reserved_peak, (int64_t)want);
    hs_registry_set(block, HS_REG_HUGE_PREV);
  }
  h->magic = HS_HUGE_MAGIC;
  h->map_base = h;
  h->map_size = map_size;
  h->block = block;
  h->usable = (size_t)(((uint8_t *)h + map_size) - block);
  hs_stat_add(&hs_gstats.committed, &hs_gstats.committed_peak, (int64_t)map_size);
  hs_stat_add(&hs_gstats.huge, NULL, 1);
  hs_stat_add(&hs_gstats.huge_bytes, &hs_gstats.huge_bytes_peak, (int64_t)h->usable);
  return block;
}

hs_huge_t *hs_huge_of(const void *p, unsigned kind) {
  uint8_t *unit = (uint8_t *)hs_segment_of(p);
  return (hs_huge_t *)(kind == HS_REG_HUGE ? unit : unit - HS_SEGMENT_SIZE);
}

void hs_huge_free(hs_huge_t *h) {
  hs_registry_set(h->block, HS_REG_NONE);
  hs_stat_add(&hs_gstats.committed, NULL, -(int64_t)h->map_size);
  hs_stat_add(&hs_gstats.huge, NULL, -1);
  hs_stat_add(&hs_gstats.huge_bytes, NULL, -(int64_t)h->usable);
  hs_os_unmap(h->map_base, h->map_size);
}
