/* The statistics as JSON (one object per line), and the dumps: at exit
 * (HSMALLOC_STATS=1|json) and on SIGUSR2.
 *
 * The JSON is formatted into a static buffer and written with write(2) (or fwrite for
 * hsmalloc_stats_print_json's FILE), so that the SIGUSR2 handler can write it without
 * stdio. In the handler every lock is only tried: when one is taken (the signal came
 * while a thread held it, maybe the interrupted one) the dump is left for the next
 * maintenance of any thread (every 256 allocation slow paths), never waited for.
 * Each object says why it was written ("event": exit, signal, call) and its "seq"
 * number in the process, so a reader can take the last one of each process. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "hsmalloc.h"
#include "internal.h"

typedef struct {
  FILE *file; /* or fd */
  int fd;
  size_t n;
  char buf[16384];
} jout_t;

static void jflush(jout_t *o) {
  if (o->file != NULL) fwrite(o->buf, 1, o->n, o->file);
  else
    for (size_t done = 0; done < o->n;) {
      ssize_t w = write(o->fd, o->buf + done, o->n - done);
      if (w <= 0 && errno != EINTR) break;
      if (w > 0) done += (size_t)w;
    }
  o->n = 0;
}

static void jput(jout_t *o, const char *fmt, ...) {
  for (int attempt = 0; attempt < 2; attempt++) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + o->n, sizeof o->buf - o->n, fmt, ap);
    va_end(ap);
    if (k >= 0 && (size_t)k < sizeof o->buf - o->n) {
      o->n += (size_t)k;
      return;
    }
    o->buf[o->n] = '\0';
    jflush(o); /* and again, into the empty buffer (every piece is short) */
  }
}

/* The fields of one statistics object (the process's totals or a chain's). */
static void write_fields(jout_t *o, const hsmalloc_stats_t *st) {
#define U(k) jput(o, "\"%s\": %llu, ", #k, (unsigned long long)st->k)
#define I(k) jput(o, "\"%s\": %lld, ", #k, (long long)st->k)
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
  jput(o, "\"fragmentation\": %.6f, \"fast_path_hit_rate\": %.6f, ", st->fragmentation,
       st->fast_path_hit_rate);
  U(allocs);
  U(frees);
  U(slow_allocs);
  U(reallocs);
  U(remote_frees);
  U(remote_pushes);
  U(queue_drains);
  U(drained_blocks);
  U(rfq_blocks);
  U(rfq_bytes);
  U(transfer_out);
  U(transfer_in);
  U(orphan_frees);
  U(foreign_frees);
  U(purges);
  U(purged_bytes);
  U(growth_purges);
  U(growth_purged_bytes);
  U(growth_refaulted_bytes);
  U(segments);
  U(segments_peak);
  U(segments_cached);
  U(pages);
  U(pages_peak);
  U(huge_blocks);
  U(heaps);
  U(heaps_abandoned);
  U(heaps_frees_behind);
  U(real_bytes);
  U(virtual_bytes);
  U(overhead_bytes);
  U(metadata_bytes);
  U(free_in_pages);
  U(free_not_returned);
  jput(o, "\"pressure\": {");
  I(pressure_enabled);
  I(pressure_level);
  I(decay_ms_now);
  I(headroom_permille);
  I(psi_some_avg10_x100);
  U(pressure_limit);
  U(pressure_available);
  U(pressure_checks);
  U(pressure_level_changes);
  jput(o, "\"pressure_purges\": %llu}, \"numa\": {", (unsigned long long)st->pressure_purges);
  U(numa_nodes);
  U(numa_placing);
  U(numa_binds);
  U(numa_bind_failures);
  U(numa_reused_same_node);
  U(numa_reused_other_node);
  jput(o, "\"numa_node\": %d}, ", (int)st->numa_node);
#undef U
#undef I
  jput(o, "\"hot\": [");
  for (uint64_t k = 0; k <= st->hot_classes; k++) {
    const hsmalloc_hot_stats_t *r = k < st->hot_classes ? &st->hot[k] : &st->rest;
    if (k == st->hot_classes) jput(o, "], \"rest\": ");
    else if (k) jput(o, ", ");
    jput(o,
         "{\"size\": %llu, \"heaps\": %u, \"seeded\": %u, \"promotions\": %llu, "
         "\"retirements\": %llu, \"allocs\": %llu, \"frees\": %llu, \"live\": %llu, "
         "\"slow_allocs\": %llu, \"fast_path_hit_rate\": %.6f, \"requested_bytes\": %llu, "
         "\"allocated_bytes\": %llu, \"fragmentation\": %.6f, \"kept_pages\": %llu}",
         (unsigned long long)r->size, r->heaps, r->seeded, (unsigned long long)r->promotions,
         (unsigned long long)r->retirements, (unsigned long long)r->allocs,
         (unsigned long long)r->frees, (unsigned long long)r->live,
         (unsigned long long)r->slow_allocs, r->fast_path_hit_rate,
         (unsigned long long)r->requested_bytes, (unsigned long long)r->allocated_bytes,
         r->fragmentation, (unsigned long long)r->kept_pages);
  }
  jput(o, ", \"bins\": [");
  int first = 1;
  for (size_t i = 0; i < HSMALLOC_STAT_BINS; i++) {
    const hsmalloc_bin_stats_t *bin = &st->bins[i];
    if (bin->allocs == 0) continue;
    const char *kind = i == HSM_FIXED_CLASSES       ? "large"
                       : i == HSM_FIXED_CLASSES + 1 ? "huge"
                                                    : "small";
    /* class 0 (requests of 0-8 bytes) and class 1 (9-16) both have 16-byte blocks */
    unsigned long long max_request = i == 0 ? 8 : bin->size;
    jput(o,
         "%s{\"kind\": \"%s\", \"size\": %llu, \"max_request\": %llu, \"allocs\": %llu, "
         "\"frees\": %llu, \"live\": %llu}",
         first ? "" : ", ", kind, (unsigned long long)bin->size, max_request,
         (unsigned long long)bin->allocs, (unsigned long long)bin->frees,
         (unsigned long long)bin->live);
    first = 0;
  }
  jput(o, "]");
}

static void write_heap(jout_t *o, const hsmalloc_heap_stats_t *r) {
  jput(o,
       "{\"id\": %u, \"state\": \"%s\", \"allocs\": %llu, \"reallocs\": %llu, \"frees\": %llu, "
       "\"slow_allocs\": %llu, \"fast_path_hit_rate\": %.6f, \"requested_bytes\": %llu, "
       "\"allocated_bytes\": %llu, \"fragmentation\": %.6f, \"remote_frees\": %llu, "
       "\"remote_pushes\": %llu, \"rfq_drains\": %llu, \"rfq_blocks\": %llu, \"rfq_bytes\": %llu, "
       "\"segments\": %llu, \"real_bytes\": %llu, \"virtual_bytes\": %llu, \"page_bytes\": %llu, "
       "\"transfer_out\": %llu, \"transfer_in\": %llu, \"drain_areas\": %llu}",
       r->id, r->state == 2 ? "abandoned" : "owned", (unsigned long long)r->allocs,
       (unsigned long long)r->reallocs, (unsigned long long)r->frees,
       (unsigned long long)r->slow_allocs, r->fast_path_hit_rate,
       (unsigned long long)r->requested_bytes, (unsigned long long)r->allocated_bytes,
       r->fragmentation, (unsigned long long)r->remote_frees, (unsigned long long)r->remote_pushes,
       (unsigned long long)r->rfq_drains, (unsigned long long)r->rfq_blocks,
       (unsigned long long)r->rfq_bytes, (unsigned long long)r->segments,
       (unsigned long long)r->real_bytes, (unsigned long long)r->virtual_bytes,
       (unsigned long long)r->page_bytes, (unsigned long long)r->transfer_out,
       (unsigned long long)r->transfer_in, (unsigned long long)r->drain_areas);
}

static const char *event_name[] = {"call", "exit", "signal"};
static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_flag dump_busy = ATOMIC_FLAG_INIT; /* the dump buffer: one dump at a time */
enum { EV_CALL, EV_EXIT, EV_SIGNAL };

/* One JSON object on one line. Returns -1 (nothing written) when `nonblocking` and a
 * lock is taken. */
static int write_json(jout_t *o, int event, int nonblocking) {
  HSM_BIG_BSS static hsmalloc_stats_t st, chain; /* big: static, under dump_lock */
  HSM_BIG_BSS static hsmalloc_heap_stats_t row;
  static _Atomic uint64_t seq;
  if (nonblocking ? pthread_mutex_trylock(&dump_lock) != 0 : pthread_mutex_lock(&dump_lock) != 0)
    return -1;
  if (hsm_stats_collect(&st, nonblocking) != 0) {
    pthread_mutex_unlock(&dump_lock);
    return -1;
  }
  /* the live chains are held from here (a dump lists every chain or is not written) */
  int chains = hsm_chain_stats_next != NULL && hsm_chains_lock != NULL;
  if (chains && hsm_chains_lock(nonblocking) != 0) {
    pthread_mutex_unlock(&dump_lock);
    return -1;
  }
  jput(o, "{\"allocator\": \"hsmalloc\", \"pid\": %d, \"event\": \"%s\", \"seq\": %llu, ",
       (int)getpid(), event_name[event], (unsigned long long)atomic_fetch_add(&seq, 1));
  write_fields(o, &st);
  /* Heap rows: the list may have grown since the totals (a new thread). */
  int locked = nonblocking ? hsm_heaps_trylock() : (hsm_heaps_lock(), 1);
  if (locked) {
    jput(o, ", \"per_heap\": [");
    for (size_t i = 0; hsm_heap_row_locked(i, &row) == 0; i++) {
      if (i) jput(o, ", ");
      write_heap(o, &row);
    }
    jput(o, "]");
    hsm_heaps_unlock();
  } else {
    jput(o, ", \"per_heap\": null");
  }
  if (chains) {
    jput(o, ", \"chains\": [");
    void *iter = NULL;
    char name[64];
    unsigned id;
    for (int i = 0; hsm_chain_stats_next(&iter, &chain, &id, name, sizeof name) == 0; i++) {
      for (char *c = name; *c; c++) /* a name is not escaped: keep it plain */
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = '_';
      jput(o, "%s{\"chain\": \"%s\", \"chain_id\": %u, ", i ? ", " : "", name, id);
      write_fields(o, &chain);
      jput(o, "}");
    }
    jput(o, "]");
    hsm_chains_unlock();
  }
  jput(o, "}\n");
  jflush(o);
  pthread_mutex_unlock(&dump_lock);
  return 0;
}

HSM_EXPORT void hsmalloc_stats_print_json(FILE *out) {
  HSM_BIG_BSS static jout_t o;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  o.file = out;
  o.n = 0;
  write_json(&o, EV_CALL, 0);
  fflush(out);
  pthread_mutex_unlock(&lock);
}

/* The file of HSMALLOC_STATS_FILE ("%p": the process id), opened for appending, or
 * stderr (2). open(2) only: the signal handler uses it. */
static int open_dest(void) {
  if (hsm_options.stats_file[0] == '\0') return 2;
  char path[sizeof hsm_options.stats_file + 16];
  const char *pid = strstr(hsm_options.stats_file, "%p");
  if (pid != NULL)
    snprintf(path, sizeof path, "%.*s%d%s", (int)(pid - hsm_options.stats_file),
             hsm_options.stats_file, (int)getpid(), pid + 2);
  else snprintf(path, sizeof path, "%s", hsm_options.stats_file);
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  return fd >= 0 ? fd : 2;
}

/* A JSON dump to the statistics destination; -1 when `nonblocking` found a lock taken. */
static int dump_json(int event, int nonblocking) {
  HSM_BIG_BSS static jout_t o;
  if (atomic_flag_test_and_set(&dump_busy)) return -1;
  int err = errno;
  o.file = NULL;
  o.n = 0;
  o.fd = open_dest();
  int rc = write_json(&o, event, nonblocking);
  if (o.fd != 2) close(o.fd);
  errno = err;
  atomic_flag_clear(&dump_busy);
  return rc;
}

static void dump_text(void) {
  FILE *out = stderr;
  int fd = open_dest();
  if (fd != 2) out = fdopen(fd, "a");
  if (out == NULL) {
    close(fd);
    return;
  }
  hsmalloc_stats_print(out);
  if (out != stderr) fclose(out);
}

void hsm_stats_at_exit(void) {
  if (hsm_options.stats == 2) dump_json(EV_EXIT, 0);
  else dump_text();
}

/* ---- SIGUSR2 ---- */

_Atomic int hsm_stats_signal_flag; /* read inline by hsm_stats_signal_pending */

/* Always JSON (whatever HSMALLOC_STATS says): the text report uses stdio. */
static void on_sigusr2(int sig) {
  (void)sig;
  if (dump_json(EV_SIGNAL, 1) != 0)
    atomic_store_explicit(&hsm_stats_signal_flag, 1, memory_order_relaxed);
}

void hsm_stats_signal_dump(void) {
  if (!atomic_exchange(&hsm_stats_signal_flag, 0)) return;
  if (dump_json(EV_SIGNAL, 0) != 0) atomic_store(&hsm_stats_signal_flag, 1);
}

/* A fork while another thread was dumping: the child has no such thread, so its dump
 * at exit must not wait for it. */
static void dump_fork_child(void) {
  pthread_mutex_init(&dump_lock, NULL);
  atomic_flag_clear(&dump_busy);
}

/* With statistics on, SIGUSR2 dumps them, unless the program handles the signal itself
 * (a handler installed before this library's constructor keeps it). */
__attribute__((constructor)) static void stats_signal_install(void) {
  (void)hsm_heap_get(); /* the options are read */
  if (!hsm_options.stats) return;
  hsm_atfork(NULL, NULL, dump_fork_child);
  if (!hsm_options.stats_signal) return;
  struct sigaction old, sa;
  if (sigaction(SIGUSR2, NULL, &old) != 0 || old.sa_handler != SIG_DFL) return;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigusr2;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR2, &sa, NULL);
}
