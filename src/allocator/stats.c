/* Statistics: per-heap counters (written by their thread only) merged with the
 * global byte counters when read, per heap rows, and the text report (JSON, the
 * at-exit and SIGUSR2 dumps: stats_json.c). Reports are built from a snapshot taken
 * first, so printing (which may allocate) holds no allocator lock. */
#include <string.h>
#include <unistd.h>

#include "hsmalloc.h"
#include "internal.h"

_Static_assert(HSMALLOC_STAT_BINS == HSM_FIXED_CLASSES + 2, "public bins: fixed, large, huge");
_Static_assert(HSMALLOC_HOT_MAX == HSM_HOT_SLOTS, "one public row per hot slot");

static uint64_t g(_Atomic int64_t *v) {
  int64_t x = atomic_load_explicit(v, memory_order_relaxed);
  return x > 0 ? (uint64_t)x : 0;
}

/* Sums over every heap, by internal bin (fixed classes, hot slots, large, huge). */
typedef struct {
  uint64_t allocs[HSM_BINS], frees[HSM_BINS], slow[HSM_BINS], requested[HSM_BINS];
  uint64_t kept[HSM_HOT_SLOTS];
} sums_t;

/* A heap's frees of bin b: those free's fast path counts in the class's cache, and the
 * rest (counted in the heap's row by the slow paths). */
static uint64_t heap_frees(hsm_heap_t *h, size_t b) {
  uint64_t n = HSM_READ(h->stats.frees[b]);
  return b < HSM_CLASSES ? n + HSM_READ(h->cache[b].frees) : n;
}

static void add_heap(sums_t *t, hsm_heap_t *h) {
  hsm_heap_stats_t *s = &h->stats;
  for (size_t b = 0; b < HSM_BINS; b++) {
    t->allocs[b] += HSM_READ(s->allocs[b]);
    t->frees[b] += heap_frees(h, b);
    t->slow[b] += HSM_READ(s->slow[b]);
    t->requested[b] += HSM_READ(s->requested[b]);
  }
  for (size_t k = 0; k < HSM_HOT_SLOTS; k++) t->kept[k] += HSM_READ(s->kept_pages[k]);
}

static double ratio(uint64_t a, uint64_t b, double none) {
  return b ? (double)a / (double)b : none;
}

static void finish_row(hsmalloc_hot_stats_t *r) {
  r->live = r->allocs >= r->frees ? r->allocs - r->frees : 0;
  r->fast_path_hit_rate = r->allocs ? 1.0 - ratio(r->slow_allocs, r->allocs, 0) : 1.0;
  if (r->fast_path_hit_rate < 0) r->fast_path_hit_rate = 0;
  r->fragmentation = ratio(r->allocated_bytes, r->requested_bytes, 1.0);
}

static void hot_rows(hsmalloc_stats_t *st, const sums_t *t, int nonblocking) {
  /* a slot's size is set once: a signal handler reads them without the lock */
  if (!nonblocking) hsm_hot_lock();
  for (size_t k = 0; k < HSM_HOT_SLOTS; k++) {
    hsm_hot_slot_t *slot = &hsm_hot_slots[k];
    if (slot->size == 0) continue;
    size_t cls = HSM_FIXED_CLASSES + k;
    hsmalloc_hot_stats_t *r = &st->hot[st->hot_classes++];
    r->size = slot->size;
    r->heaps = (uint32_t)atomic_load_explicit(&slot->heaps, memory_order_relaxed);
    r->seeded = (uint32_t)slot->seeded;
    r->promotions = atomic_load_explicit(&slot->promotions, memory_order_relaxed);
    r->retirements = atomic_load_explicit(&slot->retirements, memory_order_relaxed);
    r->allocs = t->allocs[cls];
    r->frees = t->frees[cls];
    r->slow_allocs = t->slow[cls];
    r->requested_bytes = t->requested[cls];
    r->allocated_bytes = r->allocs * slot->size;
    r->kept_pages = t->kept[k];
    finish_row(r);
    st->rest.allocs -= r->allocs;
    st->rest.frees -= r->frees;
    st->rest.slow_allocs -= r->slow_allocs;
    st->rest.requested_bytes -= r->requested_bytes;
    st->rest.allocated_bytes -= r->allocated_bytes;
  }
  if (!nonblocking) hsm_hot_unlock();
  finish_row(&st->rest);
}

#define HEADER_BYTES ((uint64_t)((sizeof(hsm_segment_t) + 4095) & ~(size_t)4095))
#define HEAP_BYTES   ((uint64_t)((sizeof(hsm_heap_t) + 63) & ~(size_t)63))

/* The spy's figures derived from the others, then pressure and NUMA. */
static void spy_figures(hsmalloc_stats_t *st, uint64_t huge_live) {
  /* the heap objects live outside segments (a pool of their own): counted in here */
  uint64_t headers = st->segments * HEADER_BYTES, heap_objects = st->heaps * HEAP_BYTES;
  st->real_bytes = st->committed + heap_objects;
  st->virtual_bytes = st->reserved + heap_objects;
  st->overhead_bytes = st->real_bytes > st->allocated_now ? st->real_bytes - st->allocated_now : 0;
  st->metadata_bytes = headers + heap_objects;
  uint64_t in_pages = st->allocated_now > huge_live ? st->allocated_now - huge_live : 0;
  st->free_in_pages = st->page_bytes > in_pages ? st->page_bytes - in_pages : 0;
  uint64_t held = st->page_bytes + headers + st->huge_bytes;
  st->free_not_returned = st->committed > held ? st->committed - held : 0;
  st->pressure_enabled = hsm_options.pressure;
  st->pressure_level = atomic_load_explicit(&hsm_pressure.level, memory_order_relaxed);
  st->decay_ms_now = hsm_decay_now();
  st->headroom_permille = atomic_load_explicit(&hsm_pressure.headroom_pm, memory_order_relaxed);
  st->psi_some_avg10_x100 = atomic_load_explicit(&hsm_pressure.psi_some, memory_order_relaxed);
  st->pressure_limit = g(&hsm_pressure.limit);
  st->pressure_available = g(&hsm_pressure.available);
  st->pressure_checks = atomic_load_explicit(&hsm_pressure.checks, memory_order_relaxed);
  st->pressure_level_changes =
      atomic_load_explicit(&hsm_pressure.level_changes, memory_order_relaxed);
  st->pressure_purges = atomic_load_explicit(&hsm_pressure.pressure_purges, memory_order_relaxed);
  st->numa_nodes = (uint32_t)hsm_numa_nodes();
  st->numa_placing = (uint32_t)hsm_numa_enabled();
  st->numa_node = -1; /* the process is not bound to one node (chains are) */
  st->numa_binds = atomic_load_explicit(&hsm_numa_stats.binds, memory_order_relaxed);
  st->numa_bind_failures =
      atomic_load_explicit(&hsm_numa_stats.bind_failures, memory_order_relaxed);
  st->numa_reused_same_node =
      atomic_load_explicit(&hsm_numa_stats.reused_same_node, memory_order_relaxed);
  st->numa_reused_other_node =
      atomic_load_explicit(&hsm_numa_stats.reused_other_node, memory_order_relaxed);
}

/* One heap's row (the caller holds the heap list, or the heap is the caller's). */
static void heap_row(hsm_heap_t *h, hsmalloc_heap_stats_t *r) {
  hsm_heap_stats_t *s = &h->stats;
  memset(r, 0, sizeof *r);
  r->id = h->id;
  r->state = h->state == HSM_HEAP_ABANDONED ? 2 : 1;
  for (size_t b = 0; b < HSM_BINS; b++) {
    uint64_t n = HSM_READ(s->allocs[b]);
    r->allocs += n;
    r->frees += heap_frees(h, b);
    r->slow_allocs += HSM_READ(s->slow[b]);
    r->requested_bytes += HSM_READ(s->requested[b]);
    r->allocated_bytes += b < HSM_CLASSES ? n * hsm_class_size[b] : HSM_READ(s->alloc_bytes[b]);
  }
  r->reallocs = HSM_READ(s->reallocs);
  r->fast_path_hit_rate = r->allocs ? 1.0 - ratio(r->slow_allocs, r->allocs, 0) : 1.0;
  if (r->fast_path_hit_rate < 0) r->fast_path_hit_rate = 0;
  r->fragmentation = ratio(r->allocated_bytes, r->requested_bytes, 1.0);
  r->remote_frees = HSM_READ(s->remote_frees);
  r->remote_pushes = HSM_READ(s->remote_pushes);
  r->rfq_drains = HSM_READ(s->drains);
  r->rfq_blocks = HSM_READ(s->drained);
  r->rfq_bytes = HSM_READ(s->drained_bytes);
  r->segments = HSM_READ(s->segments);
  r->real_bytes = HSM_READ(s->committed);
  r->virtual_bytes = r->segments * HSM_SEGMENT_SIZE;
  r->page_bytes = HSM_READ(s->page_bytes);
  r->transfer_out = HSM_READ(s->transfer_out);
  r->transfer_in = HSM_READ(s->transfer_in);
  r->drain_areas = HSM_READ(s->drain_areas);
}

/* Rows by id, for one heap or all: the list is newest first. */
int hsm_heap_row_locked(size_t index, void *row) {
  hsmalloc_heap_stats_t *out = row;
  for (hsm_heap_t *h = hsm_heaps_first(); h != NULL; h = h->all_next)
    if (h->id == index) {
      heap_row(h, out);
      return 0;
    }
  return -1;
}

/* One heap's figures as a whole hsmalloc_stats_t (zero where a heap has none): what a
 * chain built on its own heap can return from hsmalloc_chain_stats. */
void hsm_stats_heap_fill(hsm_heap_t *h, void *out) {
  hsmalloc_stats_t *st = out;
  hsmalloc_heap_stats_t r;
  memset(st, 0, sizeof *st);
  heap_row(h, &r);
  st->requested_total = r.requested_bytes;
  st->allocated_total = r.allocated_bytes;
  st->fragmentation = r.fragmentation;
  st->allocs = r.allocs;
  st->frees = r.frees;
  st->reallocs = r.reallocs;
  st->slow_allocs = r.slow_allocs;
  st->fast_path_hit_rate = r.fast_path_hit_rate;
  st->remote_frees = r.remote_frees;
  st->remote_pushes = r.remote_pushes;
  st->queue_drains = r.rfq_drains;
  st->drained_blocks = st->rfq_blocks = r.rfq_blocks;
  st->rfq_bytes = r.rfq_bytes;
  st->segments = r.segments;
  st->page_bytes = r.page_bytes;
  st->committed = st->real_bytes = r.real_bytes;
  st->reserved = st->virtual_bytes = r.virtual_bytes;
  st->metadata_bytes = r.segments * HEADER_BYTES;
  st->heaps = 1;
}

HSM_EXPORT int hsmalloc_heap_stats_get(size_t index, hsmalloc_heap_stats_t *out) {
  if (out == NULL) return -1;
  (void)hsm_heap_get(); /* (makes sure the allocator is initialized) */
  hsm_heaps_lock();
  int rc = hsm_heap_row_locked(index, out);
  hsm_heaps_unlock();
  return rc;
}

HSM_EXPORT int hsmalloc_heap_stats_self(hsmalloc_heap_stats_t *out) {
  hsm_heap_t *h = hsm_tls_heap_or_null();
  if (out == NULL || h == NULL) return -1;
  heap_row(h, out);
  return 0;
}

int hsm_stats_collect(void *out, int nonblocking) {
  HSM_BIG_BSS static sums_t t; /* big: static, under the lock */
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  hsmalloc_stats_t *st = out;
  memset(st, 0, sizeof *st);
  uint64_t large_bytes_out = 0, huge_bytes_out = 0, big_bytes = 0;
  if (nonblocking) {
    if (pthread_mutex_trylock(&lock) != 0) return -1;
    if (!hsm_heaps_trylock()) {
      pthread_mutex_unlock(&lock);
      return -1;
    }
  } else {
    (void)hsm_heap_get(); /* (makes sure the allocator is initialized) */
    pthread_mutex_lock(&lock);
    hsm_heaps_lock();
  }
  memset(&t, 0, sizeof t);
  for (hsm_heap_t *h = hsm_heaps_first(); h != NULL; h = h->all_next) {
    hsm_heap_stats_t *s = &h->stats;
    st->heaps++;
    if (h->state == HSM_HEAP_ABANDONED) st->heaps_abandoned++;
    add_heap(&t, h);
    big_bytes += HSM_READ(s->alloc_bytes[HSM_BIN_LARGE]) + HSM_READ(s->alloc_bytes[HSM_BIN_HUGE]);
    large_bytes_out +=
        HSM_READ(s->alloc_bytes[HSM_BIN_LARGE]) - HSM_READ(s->free_bytes[HSM_BIN_LARGE]);
    huge_bytes_out +=
        HSM_READ(s->alloc_bytes[HSM_BIN_HUGE]) - HSM_READ(s->free_bytes[HSM_BIN_HUGE]);
    st->remote_frees += HSM_READ(s->remote_frees);
    st->remote_pushes += HSM_READ(s->remote_pushes);
    st->queue_drains += HSM_READ(s->drains);
    st->drained_blocks += HSM_READ(s->drained);
    st->reallocs += HSM_READ(s->reallocs);
    st->rfq_bytes += HSM_READ(s->drained_bytes);
    st->transfer_out += HSM_READ(s->transfer_out);
    st->transfer_in += HSM_READ(s->transfer_in);
  }
  st->rfq_blocks = st->drained_blocks;
  hsm_heaps_unlock();
  st->allocated_total = big_bytes;
  for (size_t b = 0; b < HSM_BINS; b++) {
    uint64_t live = t.allocs[b] >= t.frees[b] ? t.allocs[b] - t.frees[b] : 0;
    st->allocs += t.allocs[b];
    st->frees += t.frees[b];
    st->slow_allocs += t.slow[b];
    st->requested_total += t.requested[b];
    if (b < HSM_CLASSES) {
      st->allocated_total += t.allocs[b] * hsm_class_size[b];
      st->allocated_now += live * hsm_class_size[b];
    }
    /* a lane class is counted in its fixed class's row */
    size_t pub = b < HSM_FIXED_CLASSES                   ? b
                 : b >= HSM_LANE_BASE && b < HSM_CLASSES ? hsm_lane_fixed_class(b)
                 : b == HSM_BIN_LARGE                    ? HSM_FIXED_CLASSES
                 : b == HSM_BIN_HUGE                     ? HSM_FIXED_CLASSES + 1
                                                         : HSMALLOC_STAT_BINS;
    if (pub == HSMALLOC_STAT_BINS) continue; /* a hot class: its own row */
    hsmalloc_bin_stats_t *bin = &st->bins[pub];
    bin->size = pub < HSM_FIXED_CLASSES ? hsm_class_size[pub] : 0;
    bin->allocs += t.allocs[b];
    bin->frees += t.frees[b];
    bin->live += live;
  }
  st->rest.allocs = st->allocs;
  st->rest.frees = st->frees;
  st->rest.slow_allocs = st->slow_allocs;
  st->rest.requested_bytes = st->requested_total;
  st->rest.allocated_bytes = st->allocated_total;
  hot_rows(st, &t, nonblocking);
  pthread_mutex_unlock(&lock);
  st->allocated_now += large_bytes_out + huge_bytes_out;
  st->fragmentation = ratio(st->allocated_total, st->requested_total, 1.0);
  st->fast_path_hit_rate = st->allocs ? 1.0 - ratio(st->slow_allocs, st->allocs, 0) : 1.0;
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
  st->growth_purges = g(&hsm_gstats.growth_purges);
  st->growth_purged_bytes = g(&hsm_gstats.growth_purged_bytes);
  st->growth_refaulted_bytes = g(&hsm_gstats.growth_refaulted_bytes);
  st->segments = g(&hsm_gstats.segments);
  st->segments_peak = g(&hsm_gstats.segments_peak);
  st->segments_cached = g(&hsm_gstats.segments_cached);
  st->pages = g(&hsm_gstats.pages);
  st->pages_peak = g(&hsm_gstats.pages_peak);
  st->huge_blocks = g(&hsm_gstats.huge);
  spy_figures(st, huge_bytes_out);
  return 0;
}

HSM_EXPORT int hsmalloc_stats_get(hsmalloc_stats_t *st) { return hsm_stats_collect(st, 0); }

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

/* One line per live chain (chain_stats.c), oldest first. */
static void print_chains(FILE *out) {
  HSM_BIG_BSS static hsmalloc_stats_t c; /* static: big; under hsmalloc_stats_print's lock */
  if (hsm_chain_stats_next == NULL || hsm_chains_lock == NULL || hsm_chains_lock(0) != 0) return;
  void *iter = NULL;
  char name[64], live[32], real[32], virt[32], over[32], number[16];
  unsigned id;
  while (hsm_chain_stats_next(&iter, &c, &id, name, sizeof name) == 0) {
    snprintf(number, sizeof number, "%u", id);
    if (strcmp(number, name) == 0) number[0] = '\0'; /* unnamed: the number once */
    else snprintf(number, sizeof number, " (#%u)", id);
    human(live, sizeof live, c.allocated_now);
    human(real, sizeof real, c.real_bytes);
    human(virt, sizeof virt, c.reserved);
    human(over, sizeof over, c.overhead_bytes);
    fprintf(out,
            "  chain %s%s: allocations %llu, frees %llu, reallocations %llu, live %s, real "
            "%s, virtual %s, overhead %s, fast-path hit rate %.4f",
            name, number, (unsigned long long)c.allocs, (unsigned long long)c.frees,
            (unsigned long long)c.reallocs, live, real, virt, over, c.fast_path_hit_rate);
    if (c.numa_node >= 0) fprintf(out, ", NUMA node %d", c.numa_node);
    fputc('\n', out);
  }
  hsm_chains_unlock();
}

HSM_EXPORT void hsmalloc_stats_print(FILE *out) {
  HSM_BIG_BSS static hsmalloc_stats_t st; /* static: no allocation, and big */
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
  fprintf(out, "  transfer cache: %llu blocks put, %llu taken\n",
          (unsigned long long)st.transfer_out, (unsigned long long)st.transfer_in);
  fprintf(out, "  foreign frees %llu, frees by exiting threads %llu\n",
          (unsigned long long)st.foreign_frees, (unsigned long long)st.orphan_frees);
  human(a, sizeof a, st.purged_bytes);
  fprintf(out, "  returned to the OS: %llu times, %s\n", (unsigned long long)st.purges, a);
  if (st.growth_purges) {
    human(a, sizeof a, st.growth_purged_bytes);
    human(b, sizeof b, st.growth_refaulted_bytes);
    fprintf(out, "    of which against growth: %llu times, %s (%s of it used again)\n",
            (unsigned long long)st.growth_purges, a, b);
  }
  fprintf(out,
          "  segments %llu (peak %llu, cached %llu), pages %llu (peak %llu), huge blocks %llu\n",
          (unsigned long long)st.segments, (unsigned long long)st.segments_peak,
          (unsigned long long)st.segments_cached, (unsigned long long)st.pages,
          (unsigned long long)st.pages_peak, (unsigned long long)st.huge_blocks);
  fprintf(out, "  heaps %llu (%llu abandoned)\n", (unsigned long long)st.heaps,
          (unsigned long long)st.heaps_abandoned);
  human(a, sizeof a, st.overhead_bytes);
  human(b, sizeof b, st.metadata_bytes);
  fprintf(out, "  overhead (committed - live) %s: metadata %s", a, b);
  human(a, sizeof a, st.free_in_pages);
  human(b, sizeof b, st.free_not_returned);
  fprintf(out, ", free in pages %s, free not returned %s\n", a, b);
  fprintf(out, "  reallocations %llu; remote-free queues received %llu blocks (%llu bytes)\n",
          (unsigned long long)st.reallocs, (unsigned long long)st.rfq_blocks,
          (unsigned long long)st.rfq_bytes);
  static const char *level[] = {"none", "some", "high", "critical"};
  if (st.pressure_enabled && st.pressure_checks == 0)
    fprintf(out, "  memory pressure not read yet (decay now %lld ms)\n",
            (long long)st.decay_ms_now);
  else if (st.pressure_enabled)
    fprintf(out,
            "  memory pressure %s (headroom %.1f%%), decay now %lld ms; %llu readings, %llu "
            "purges at once\n",
            level[st.pressure_level & 3], (double)st.headroom_permille / 10.0,
            (long long)st.decay_ms_now, (unsigned long long)st.pressure_checks,
            (unsigned long long)st.pressure_purges);
  else fprintf(out, "  memory pressure not read (HSMALLOC_PRESSURE=0): fixed decay\n");
  fprintf(out, "  NUMA: %u node(s), placement %s, %llu binds (%llu failed)\n", st.numa_nodes,
          st.numa_placing ? "on" : "off", (unsigned long long)st.numa_binds,
          (unsigned long long)st.numa_bind_failures);
  print_chains(out);
  if (st.hot_classes) {
    fprintf(out, "  hot classes (exact sizes):\n");
    fprintf(out, "  %8s %6s %12s %12s %8s %12s %12s %7s %5s\n", "size", "heaps", "allocs", "live",
            "hit", "requested", "allocated", "frag", "kept");
    for (uint64_t k = 0; k <= st.hot_classes; k++) {
      hsmalloc_hot_stats_t *r = k < st.hot_classes ? &st.hot[k] : &st.rest;
      char size[24];
      if (k < st.hot_classes) snprintf(size, sizeof size, "%llu", (unsigned long long)r->size);
      else snprintf(size, sizeof size, "rest");
      fprintf(out, "  %8s %6u %12llu %12llu %8.4f %12llu %12llu %7.4f %5llu\n", size, r->heaps,
              (unsigned long long)r->allocs, (unsigned long long)r->live, r->fast_path_hit_rate,
              (unsigned long long)r->requested_bytes, (unsigned long long)r->allocated_bytes,
              r->fragmentation, (unsigned long long)r->kept_pages);
    }
  }
  fprintf(out, "  %10s %14s %14s %12s\n", "size", "allocs", "frees", "live");
  for (size_t i = 0; i < HSMALLOC_STAT_BINS; i++) {
    hsmalloc_bin_stats_t *bin = &st.bins[i];
    if (bin->allocs == 0) continue;
    char label[16];
    if (i == HSM_FIXED_CLASSES) snprintf(label, sizeof label, "large");
    else if (i == HSM_FIXED_CLASSES + 1) snprintf(label, sizeof label, "huge");
    else if (i == 0) snprintf(label, sizeof label, "16 (<=8)"); /* requests of 0-8 bytes */
    else snprintf(label, sizeof label, "%llu", (unsigned long long)bin->size);
    fprintf(out, "  %10s %14llu %14llu %12llu\n", label, (unsigned long long)bin->allocs,
            (unsigned long long)bin->frees, (unsigned long long)bin->live);
  }
  fflush(out);
  pthread_mutex_unlock(&lock);
}
