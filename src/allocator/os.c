/* The operating system side: aligned mappings, purging, the address registry and the
 * global byte counters (the clock is clock.c's). */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

hsm_global_stats_t hsm_gstats;
/* Page-aligned, so that each 4 KiB of it covers 8 GiB of address space exactly: which
 * of its pages a process writes follows from its segments' addresses alone. */
HSM_BIG_BSS _Atomic(uint8_t) hsm_registry[HSM_REGISTRY_SIZE] __attribute__((aligned(4096)));

void hsm_stat_add(_Atomic int64_t *now, _Atomic int64_t *peak, int64_t delta) {
  int64_t v = atomic_fetch_add_explicit(now, delta, memory_order_relaxed) + delta;
  if (peak == NULL || delta <= 0) return;
  int64_t p = atomic_load_explicit(peak, memory_order_relaxed);
  while (v > p && !atomic_compare_exchange_weak_explicit(peak, &p, v, memory_order_relaxed,
                                                         memory_order_relaxed)) {}
}

/* One byte per 2 MiB unit of the address space tells whether a pointer is ours.
 * A zero-initialized array: reserved address space, only the pages covering used
 * addresses are ever touched, and it is valid before anything is initialized. */
void *hsm_os_map_aligned(size_t size, size_t align) {
  int err = errno;
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    errno = err;
    return NULL;
  }
  if (((uintptr_t)p & (align - 1)) == 0) goto done;
  munmap(p, size);
  /* Over-map and trim both ends to the alignment. */
  size_t over = size + align;
  if (over < size) {
    errno = err;
    return NULL;
  }
  uint8_t *raw = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    errno = err;
    return NULL;
  }
  uint8_t *aligned = (uint8_t *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
  if (aligned > raw) munmap(raw, (size_t)(aligned - raw));
  size_t tail = (size_t)((raw + over) - (aligned + size));
  if (tail) munmap(aligned + size, tail);
  p = aligned;
done:
  if (hsm_options.hugepages) madvise(p, size, MADV_HUGEPAGE);
  HSM_TRACE(HSM_EV_MAP, NULL, p, size);
  hsm_stat_add(&hsm_gstats.reserved, &hsm_gstats.reserved_peak, (int64_t)size);
  errno = err;
  return p;
}

void hsm_os_unmap(void *p, size_t size) {
  int err = errno;
  munmap(p, size);
  HSM_TRACE(HSM_EV_UNMAP, NULL, p, size);
  hsm_stat_add(&hsm_gstats.reserved, NULL, -(int64_t)size);
  errno = err;
}

/* Give the physical memory back; the range stays mapped and reads as zero. */
void hsm_os_purge(void *p, size_t size) {
  int err = errno;
  madvise(p, size, MADV_DONTNEED);
  HSM_TRACE(HSM_EV_PURGE, NULL, p, size);
  atomic_fetch_add_explicit(&hsm_gstats.purges, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&hsm_gstats.purged_bytes, (int64_t)size, memory_order_relaxed);
  errno = err;
}
