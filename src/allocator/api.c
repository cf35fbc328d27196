/* hsmalloc's own entry points (hsmalloc.h) besides the statistics (stats.c). */
#include <errno.h>

#include "hsmalloc.h"
#include "internal.h"

HS_EXPORT void *hsmalloc_malloc(size_t size) { return hs_malloc(size); }
HS_EXPORT void *hsmalloc_calloc(size_t n, size_t size) { return hs_calloc(n, size); }
HS_EXPORT void *hsmalloc_realloc(void *p, size_t size) { return hs_realloc(p, size); }
HS_EXPORT void hsmalloc_free(void *p) { hs_free(p); }
HS_EXPORT size_t hsmalloc_usable_size(const void *p) { return hs_usable_size(p); }
HS_EXPORT int hsmalloc_owns(const void *p) { return hs_owns(p); }

HS_EXPORT void *hsmalloc_memalign(size_t align, size_t size) {
  if (!hs_is_pow2(align)) { errno = EINVAL; return NULL; }
  return hs_memalign(align, size);
}

HS_EXPORT size_t hsmalloc_collect(void) {
  int64_t before = atomic_load(&hs_gstats.purged_bytes);
  int64_t reserved_before = atomic_load(&hs_gstats.reserved);
  hs_heap_t *heap = hs_heap_get();
  if (heap != NULL) {
    hs_cache_flush_all(heap);
    hs_rbatch_flush_all(heap);
    hs_heap_drain_remote(heap);
    hs_heap_collect_empty(heap);
    if (!hs_options.hugepages) {
      long saved = hs_options.decay_ms;
      hs_options.decay_ms = 0;
      hs_segment_decay(heap, hs_now_ms());
      hs_options.decay_ms = saved;
    }
  }
  hs_collect_abandoned();
  hs_segment_cache_decay(hs_now_ms(), 1);
  hs_huge_cache_decay(hs_now_ms(), 1);
  int64_t purged = atomic_load(&hs_gstats.purged_bytes) - before;
  int64_t unmapped = reserved_before - atomic_load(&hs_gstats.reserved);
  return (size_t)((purged > 0 ? purged : 0) + (unmapped > 0 ? unmapped : 0));
}
