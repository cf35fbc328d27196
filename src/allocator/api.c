/* hsmalloc's own entry points (hsmalloc.h) besides the statistics (stats.c). */
#include <errno.h>

#include "hsmalloc.h"
#include "internal.h"

HSM_EXPORT void *hsmalloc_malloc(size_t size) { return hsm_malloc(size); }
HSM_EXPORT void *hsmalloc_calloc(size_t n, size_t size) { return hsm_calloc(n, size); }
HSM_EXPORT void *hsmalloc_realloc(void *p, size_t size) { return hsm_realloc(p, size); }
HSM_EXPORT void hsmalloc_free(void *p) { hsm_free(p); }
HSM_EXPORT size_t hsmalloc_usable_size(const void *p) { return hsm_usable_size(p); }
HSM_EXPORT int hsmalloc_owns(const void *p) { return hsm_owns(p); }

HSM_EXPORT void *hsmalloc_memalign(size_t align, size_t size) {
  if (!hsm_is_pow2(align)) {
    errno = EINVAL;
    return NULL;
  }
  return hsm_memalign(align, size);
}

HSM_EXPORT size_t hsmalloc_collect(void) {
  int64_t before = atomic_load(&hsm_gstats.purged_bytes);
  int64_t reserved_before = atomic_load(&hsm_gstats.reserved);
  hsm_heap_t *heap = hsm_heap_get();
  if (heap != NULL) {
    hsm_cache_flush_all(heap);
    hsm_cache_flush_transfer(heap);
    hsm_rbatch_flush_all(heap);
    hsm_heap_drain_remote(heap);
    hsm_heap_collect_empty(heap);
    hsm_segment_decay_slices(heap, hsm_now_ms(), 1);
  }
  hsm_collect_abandoned(1);
  hsm_segment_cache_decay(hsm_now_ms(), 1);
  hsm_huge_cache_decay(hsm_now_ms(), 1);
  int64_t purged = atomic_load(&hsm_gstats.purged_bytes) - before;
  int64_t unmapped = reserved_before - atomic_load(&hsm_gstats.reserved);
  return (size_t)((purged > 0 ? purged : 0) + (unmapped > 0 ? unmapped : 0));
}
