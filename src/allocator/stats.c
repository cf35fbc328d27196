/* Statistics: per-heap counters (written by their thread only) merged with the
 * global byte counters when read; text and JSON reports. Reports are built from a
 * snapshot taken first, so printing (which may allocate) holds no allocator lock. */
#include <string.h>
#include <unistd.h>

#include "hsmalloc.h"
#include "internal.h"

_Static_assert(HSMALLOC_STAT_BINS == HSM_BINS, "public bin count matches the class table");

static uint64_t g(_Atomic int64_t *v) {
  int64_t x = atomic_load_explicit(v, memory_order_relaxed);
  return x > 0 ? (uint64_t)x : 0;
}

HSM_EXPORT int hsmalloc_stats_get(hsmalloc_stats_t *st) {
  memset(st, 0, sizeof *st);
  uint64_t large_bytes_out = 0, huge_bytes_out = 0;
  (void)hsm_heap_get(); /* makes sure the allocator is initialized */
  hsm_heaps_lock();
  for (hsm_heap_t *h = hsm_heaps_first(); h != NULL; h = h->all_next) {
    hsm_heap_stats_t *s = &h->stats;
    st->heaps++;
    if (h->state == HSM_HEAP_ABANDONED) st->heaps_abandoned++;
    for (size_t i = 0; i <= HSM_CLASS_TABLE_MAX / 8; i++)
      st->bins[hsm_class_table[i]].allocs += HSM_READ(s->allocs8[i]);
    for (size_t b = 0; b < HSM_BINS; b++) {
      st->bins[b].allocs += HSM_READ(s->allocs[b]);
      st->bins[b].frees += HSM_READ(s->frees[b]);
    }
    st->allocated_total +=
        HSM_READ(s->alloc_bytes[HSM_BIN_LARGE]) + HSM_READ(s->alloc_bytes[HSM_BIN_HUGE]);
    large_bytes_out +=
        HSM_READ(s->alloc_bytes[HSM_BIN_LARGE]) - HSM_READ(s->free_bytes[HSM_BIN_LARGE]);
    huge_bytes_out +=
        HSM_READ(s->alloc_bytes[HSM_BIN_HUGE]) - HSM_READ(s->free_bytes[HSM_BIN_HUGE]);
    st->requested_total += HSM_READ(s->requested);
    st->slow_allocs += HSM_READ(s->slow);
    st->remote_frees += HSM_READ(s->remote_frees);
    st->remote_pushes += HSM_READ(s->remote_pushes);
    st->queue_drains += HSM_READ(s->drains);
    st->drained_blocks += HSM_READ(s->drained);
  }
  hsm_heaps_unlock();
  for (size_t b = 0; b < HSM_BINS; b++) {
    hsmalloc_bin_stats_t *bin = &st->bins[b];
    bin->size = b < HSM_CLASSES ? hsm_class_size[b] : 0;
    bin->live = bin->allocs >= bin->frees ? bin->allocs - bin->frees : 0;
    st->allocs += bin->allocs;
    st->frees += bin->frees;
    if (b < HSM_CLASSES) {
      st->allocated_total += bin->allocs * bin->size;
      st->allocated_now += bin->live * bin->size;
    }
  }
  st->allocated_now += large_bytes_out + huge_bytes_out;
  st->fragmentation =
      st->requested_total ? (double)st->allocated_total / (double)st->requested_total : 1.0;
  st->fast_path_hit_rate = st->allocs ? 1.0 - (double)st->slow_allocs / (double)st->allocs : 1.0;
  if (st->fast_path_hit_rate < 0) st->fast_path_hit_rate = 0;
  st->page_bytes = g(&hsm_gstats.page_bytes);
  st->page_bytes_peak = g(&hsm_gstats.page_bytes_peak);
  st->huge_bytes = g(&hsm_gstats.huge_bytes);
  st->huge_bytes_peak = g(&hsm_gstats.huge_bytes_peak);
  st->committed = g(&hsm_gstats.committed);
  st->committed_peak = g(&hsm_gstats.committed_peak);
  st->reserved = g(&hsm_gstats.reserved);
  st->reserved_peak = g(&hsm_gstats.reserved_peak);
  st->orphan_frees = atomic_load(&hsm_gstats.orphan_frees);
  st->foreign_frees = atomic_load(&hsm_gstats.foreign_frees);
  st->purges = g(&hsm_gstats.purges);
  st->purged_bytes = g(&hsm_gstats.purged_bytes);
  st->segments = g(&hsm_gstats.segments);
  st->segments_peak = g(&hsm_gstats.segments_peak);
  st->segments_cached = g(&hsm_gstats.segments_cached);
  st->pages = g(&hsm_gstats.pages);
  st->pages_peak = g(&hsm_gstats.pages_peak);
  st->huge_blocks = g(&hsm_gstats.huge);
  return 0;
}

static void human(char *buf, size_t n, uint64_t bytes) {
  const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    u++;
  }
  snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

static void row(FILE *out, const char *name, uint64_t now, uint64_t peak) {
  char a[32], b[32];
  human(a, sizeof a, now);
  human(b, sizeof b, peak);
  fprintf(out, "  %-22s %12s   peak %12s\n", name, a, b);
}

HSM_EXPORT void hsmalloc_stats_print(FILE *out) {
  static hsmalloc_stats_t st; /* static: no allocation, and big */
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  hsmalloc_stats_get(&st);
  char a[32], b[32];
  fprintf(out, "hsmalloc statistics (pid %d)\n", (int)getpid());
  human(a, sizeof a, st.requested_total);
  human(b, sizeof b, st.allocated_total);
  fprintf(out, "  requested (total)      %12s   allocated (usable, total) %s\n", a, b);
  fprintf(out, "  internal fragmentation %12.4f   (allocated / requested)\n", st.fragmentation);
  human(a, sizeof a, st.allocated_now);
  fprintf(out, "  %-22s %12s\n", "allocated now", a);
  row(out, "in pages", st.page_bytes, st.page_bytes_peak);
  row(out, "huge blocks", st.huge_bytes, st.huge_bytes_peak);
  row(out, "committed", st.committed, st.committed_peak);
  row(out, "reserved", st.reserved, st.reserved_peak);
  fprintf(out, "  allocations %llu, frees %llu, fast-path hit rate %.4f\n",
          (unsigned long long)st.allocs, (unsigned long long)st.frees, st.fast_path_hit_rate);
  fprintf(out, "  remote frees %llu in %llu batches; queue drains %llu (%llu blocks)\n",
          (unsigned long long)st.remote_frees, (unsigned long long)st.remote_pushes,
          (unsigned long long)st.queue_drains, (unsigned long long)st.drained_blocks);
  fprintf(out, "  foreign frees %llu, frees by exiting threads %llu\n",
          (unsigned long long)st.foreign_frees, (unsigned long long)st.orphan_frees);
  human(a, sizeof a, st.purged_bytes);
  fprintf(out, "  returned to the OS: %llu times, %s\n", (unsigned long long)st.purges, a);
  fprintf(out,
          "  segments %llu (peak %llu, cached %llu), pages %llu (peak %llu), huge blocks %llu\n",
          (unsigned long long)st.segments, (unsigned long long)st.segments_peak,
          (unsigned long long)st.segments_cached, (unsigned long long)st.pages,
          (unsigned long long)st.pages_peak, (unsigned long long)st.huge_blocks);
  fprintf(out, "  heaps %llu (%llu abandoned)\n", (unsigned long long)st.heaps,
          (unsigned long long)st.heaps_abandoned);
  fprintf(out, "  %10s %14s %14s %12s\n", "size", "allocs", "frees", "live");
  for (size_t i = 0; i < HSM_BINS; i++) {
    hsmalloc_bin_stats_t *bin = &st.bins[i];
    if (bin->allocs == 0) continue;
    char label[16];
    if (i == HSM_BIN_LARGE) snprintf(label, sizeof label, "large");
    else if (i == HSM_BIN_HUGE) snprintf(label, sizeof label, "huge");
    else snprintf(label, sizeof label, "%llu", (unsigned long long)bin->size);
    fprintf(out, "  %10s %14llu %14llu %12llu\n", label, (unsigned long long)bin->allocs,
            (unsigned long long)bin->frees, (unsigned long long)bin->live);
  }
  fflush(out);
  pthread_mutex_unlock(&lock);
}

HSM_EXPORT void hsmalloc_stats_print_json(FILE *out) {
  static hsmalloc_stats_t st;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  hsmalloc_stats_get(&st);
#define U(k) fprintf(out, "\"%s\": %llu, ", #k, (unsigned long long)st.k)
  fprintf(out, "{\"allocator\": \"hsmalloc\", \"pid\": %d, ", (int)getpid());
  U(requested_total);
  U(allocated_total);
  U(allocated_now);
  U(page_bytes);
  U(page_bytes_peak);
  U(huge_bytes);
  U(huge_bytes_peak);
  U(committed);
  U(committed_peak);
  U(reserved);
  U(reserved_peak);
  fprintf(out, "\"fragmentation\": %.6f, \"fast_path_hit_rate\": %.6f, ", st.fragmentation,
          st.fast_path_hit_rate);
  U(allocs);
  U(frees);
  U(slow_allocs);
  U(remote_frees);
  U(remote_pushes);
  U(queue_drains);
  U(drained_blocks);
  U(orphan_frees);
  U(foreign_frees);
  U(purges);
  U(purged_bytes);
  U(segments);
  U(segments_peak);
  U(segments_cached);
  U(pages);
  U(pages_peak);
  U(huge_blocks);
  U(heaps);
  U(heaps_abandoned);
#undef U
  fprintf(out, "\"bins\": [");
  int first = 1;
  for (size_t i = 0; i < HSM_BINS; i++) {
    hsmalloc_bin_stats_t *bin = &st.bins[i];
    if (bin->allocs == 0) continue;
    const char *kind = i == HSM_BIN_LARGE ? "large" : i == HSM_BIN_HUGE ? "huge" : "small";
    fprintf(
        out,
        "%s{\"kind\": \"%s\", \"size\": %llu, \"allocs\": %llu, \"frees\": %llu, \"live\": %llu}",
        first ? "" : ", ", kind, (unsigned long long)bin->size, (unsigned long long)bin->allocs,
        (unsigned long long)bin->frees, (unsigned long long)bin->live);
    first = 0;
  }
  fprintf(out, "]}\n");
  fflush(out);
  pthread_mutex_unlock(&lock);
}

void hsm_stats_at_exit(void) {
  FILE *out = stderr;
  int close_it = 0;
  if (hsm_options.stats_file[0]) {
    char path[sizeof hsm_options.stats_file + 16];
    const char *pid = strstr(hsm_options.stats_file, "%p"); /* %p: the process id */
    if (pid != NULL)
      snprintf(path, sizeof path, "%.*s%d%s", (int)(pid - hsm_options.stats_file),
               hsm_options.stats_file, (int)getpid(), pid + 2);
    else snprintf(path, sizeof path, "%s", hsm_options.stats_file);
    FILE *f = fopen(path, "a");
    if (f != NULL) {
      out = f;
      close_it = 1;
    }
  }
  if (hsm_options.stats == 2) hsmalloc_stats_print_json(out);
  else hsmalloc_stats_print(out);
  if (close_it) fclose(out);
}
