/* Idle memory given back when a large block is freed: the growth budget (segment.c,
 * hsm_offset_growth) kept on the way down too. (Its own file: segment.c is at its size.
 * Code added before huge.c moves huge.c's toward the page-cache folio boundary past
 * which a process's resident text grows by a window: test_footprint's text mode.) */
#include "internal.h"

/* A large block of `heap` is going back to its segment: the same budget, kept when the
 * program shrinks as when it grows. The heap's resident free slices beyond it go back
 * now, as glibc trims its heap's top and unmaps a freed big chunk: a program that frees
 * its big buffers and goes on with little (GROMACS's last steps and its clean-up) held
 * them resident to its exit, the decay's 8 s being longer than its run. The block
 * itself stays resident, its slices not yet free here (a program that frees and makes
 * again a buffer of one size, as GROMACS does three times at its end, reuses it; glibc
 * too keeps such a chunk after the first, raising its mmap threshold). The heap's own
 * slices only: cached segments and huge mappings have their own bounds, and a huge
 * block gathers its pieces from the latter. */
void hsm_offset_shrink(hsm_heap_t *heap) {
  if (hsm_options.decay_ms <= 0 || hsm_options.hugepages) return;
  int64_t used = atomic_load_explicit(&hsm_gstats.page_bytes, memory_order_relaxed) +
                 atomic_load_explicit(&hsm_gstats.huge_bytes, memory_order_relaxed);
  int64_t budget = hsm_idle_budget(used, 0);
  int64_t idle = (int64_t)hsm_segment_free_resident(heap, (uint32_t)(budget / 4096) + 1) * 4096;
  if (idle <= budget) return;
  budget = hsm_idle_budget(used, 1);
  idle = (int64_t)hsm_segment_free_resident(heap, UINT32_MAX) * 4096;
  if (idle > budget) hsm_offset_purged(hsm_heap_trim(heap, idle - budget));
}
