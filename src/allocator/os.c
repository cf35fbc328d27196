/* The operating system side: aligned mappings, purging, the address registry,
 * the clock, and the global byte counters. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

hs_global_stats_t hs_gstats;
_Atomic(uint8_t) hs_registry[HS_REGISTRY_SIZE];

void hs_stat_add(_Atomic int64_t *now, _Atomic int64_t *peak, int64_t delta) {
  int64_t v = atomic_fetch_add_explicit(now, delta, memory_order_relaxed) + delta;
  if (peak == NULL || delta <= 0) return;
  int64_t p = atomic_load_explicit(peak, memory_order_relaxed);
  while (v > p && !atomic_compare_exchange_weak_explicit(peak, &p, v, memory_order_relaxed,
                                                         memory_order_relaxed)) {
  }
}

/* One byte per 2 MiB unit of the address space tells whether a pointer is ours.
 * A zero-initialized array: reserved address space, only the pages covering used
 * addresses are ever touched, and it is valid before anything is initialized. */
void *hs_os_map_aligned(size_t size, size_t align) {
  int err = errno;
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) { errno = err; return NULL; }
  if (((uintptr_t)p & (align - 1)) == 0) goto done;
  munmap(p, size);
  /* Over-map and trim both ends to the alignment. */
  size_t over = size + align;
  if (over < size) { errno = err; return NULL; }
  uint8_t *raw = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) { errno = err; return NULL; }
  uint8_t *aligned = (uint8_t *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
  if (aligned > raw) munmap(raw, (size_t)(aligned - raw));
  size_t tail = (size_t)((raw + over) - (aligned + size));
  if (tail) munmap(aligned + size, tail);
  p = aligned;
done:
  if (hs_options.hugepages) madvise(p, size, MADV_HUGEPAGE);
  hs_stat_add(&hs_gstats.reserved, &hs_gstats.reserved_peak, (int64_t)size);
  errno = err;
  return p;
}

void hs_os_unmap(void *p, size_t size) {
  int err = errno;
  munmap(p, size);
  hs_stat_add(&hs_gstats.reserved, NULL, -(int64_t)size);
  errno = err;
}

/* Give the physical memory back; the range stays mapped and reads as zero. */
void hs_os_purge(void *p, size_t size) {
  int err = errno;
  madvise(p, size, MADV_DONTNEED);
  atomic_fetch_add_explicit(&hs_gstats.purges, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&hs_gstats.purged_bytes, (int64_t)size, memory_order_relaxed);
  errno = err;
}

uint64_t hs_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
