/* Memory pressure: how much room the node and the process's cgroup have left, turned
 * into a level that scales the decay (segment.c, huge.c). Why give memory back while
 * the node has plenty (the MPC allocator slides ask the same), and why keep it when
 * the node runs short?
 *
 * Sources, read at most every HSMALLOC_PRESSURE_CHECK_MS by whichever thread passes a
 * slow path first (a compare-and-swap elects it; the others keep the last level):
 *   /proc/meminfo              MemAvailable / MemTotal
 *   the cgroup (v2)            memory.high, memory.max, memory.current
 *   the cgroup (v1 memory)     memory.limit_in_bytes, memory.usage_in_bytes
 *   /proc/pressure/memory      "some avg10": share of time tasks stalled on memory
 * The headroom is the smallest of available / limit over the node and the cgroup.
 * Between two readings it is estimated at every poll from this process's own growth
 * since the last one (its committed bytes), so a burst of allocation that fills the
 * node within one interval is seen as it happens, without reading a file.
 * Pressure once seen is held for HSMALLOC_PRESSURE_HOLD_MS (3 s): a program whose phases run
 * into the limit one after the other keeps returning what it frees between them.
 * Nothing here allocates (open/read/close into stack buffers): it runs inside malloc.
 * The reading's buffers are small, and the cgroup is looked up once at the library's
 * start (hsm_pressure_init, in the first malloc's thread), not by the first reader: the
 * thread elected may be any, and its deepest frame sets how many pages of its stack are
 * resident for the rest of its life (the reading's 7.4 KiB of buffers in one chain of
 * frames had every such thread's stack 8 KiB deeper than the program's own use).
 *
 * Test hook: HSMALLOC_PRESSURE_FILES=DIR reads DIR/meminfo, DIR/memory.pressure (PSI
 * format), DIR/memory.current, DIR/memory.high, DIR/memory.max instead (each optional),
 * so tests can set any pressure and watch the allocator react. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

hsm_pressure_state_t hsm_pressure = {.headroom_pm = 1000};

static _Atomic uint64_t next_check_ms;
/* the last reading, for the estimate between readings */
static _Atomic int64_t base_committed, base_available, base_limit, base_psi;
static _Atomic uint64_t high_until_ms;         /* pressure held at level 2 or more until then */
static atomic_flag reading = ATOMIC_FLAG_INIT; /* one reader at a time */
static char cgroup_dir[256];                   /* "" until resolved, "-" when there is none */
static int cgroup_v1;

/* The whole (small) file into buf, NUL-terminated; length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t n = 0;
  ssize_t r;
  while (n < cap - 1 && (r = read(fd, buf + n, cap - 1 - n)) > 0) n += (size_t)r;
  close(fd);
  buf[n] = '\0';
  return (ssize_t)n;
}

/* A file holding one number ("max" reads as none): the value, or -1. */
static int64_t read_number(const char *dir, const char *name) {
  char path[512], buf[64];
  hsm_join(path, sizeof path, dir, "/", name);
  if (read_small(path, buf, sizeof buf) <= 0 || buf[0] < '0' || buf[0] > '9') return -1;
  const char *end;
  long long v = hsm_parse_dec(buf, &end);
  if (v >= (1ll << 62)) return -1; /* cgroup v1 writes "no limit" as a huge number */
  return (int64_t)v;
}

/* "Key:   123 kB" in a meminfo text: bytes, or -1. */
static int64_t meminfo_field(const char *text, const char *key) {
  const char *p = strstr(text, key);
  if (p == NULL) return -1;
  p += strlen(key);
  while (*p == ' ' || *p == ':' || *p == '\t') p++;
  const char *end;
  long long kb = hsm_parse_dec(p, &end);
  return end == p || kb < 0 ? -1 : (int64_t)kb * 1024;
}

/* "some avg10=1.23 ..." -> 123 (percent x 100), or -1. */
static int64_t psi_some_avg10(const char *text) {
  const char *p = strstr(text, "some avg10=");
  if (p == NULL) return -1;
  p += strlen("some avg10=");
  const char *end;
  long long whole = hsm_parse_dec(p, &end);
  if (end == p) return -1;
  long frac = 0;
  if (*end == '.') {
    const char *f = end + 1;
    for (int i = 0; i < 2; i++) frac = frac * 10 + (f[i] >= '0' && f[i] <= '9' ? f[i] - '0' : 0);
  }
  return (int64_t)whole * 100 + frac;
}

/* The process's memory cgroup directory: the v2 line "0::/path" when that directory
 * has memory.current, else the v1 "memory" controller's. */
static __attribute__((noinline)) void resolve_cgroup(void) {
  char text[2048];
  hsm_join(cgroup_dir, sizeof cgroup_dir, "-", NULL, NULL);
  if (read_small("/proc/self/cgroup", text, sizeof text) <= 0) return;
  for (char *line = text; line && *line;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c2 != NULL) {
      char dir[256], probe[300], buf[8];
      int v2 = c1 == line + 1 && line[0] == '0' && c2 == c1 + 1;
      int v1 = strncmp(c1 + 1, "memory", 6) == 0 && (c1[7] == ':' || c1[7] == ',');
      if (v2 || v1) {
        hsm_join(dir, sizeof dir, v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory", c2 + 1, NULL);
        hsm_join(probe, sizeof probe, dir, "/", v2 ? "memory.current" : "memory.usage_in_bytes");
        if (read_small(probe, buf, sizeof buf) > 0) {
          memcpy(cgroup_dir, dir, sizeof cgroup_dir);
          cgroup_v1 = v1;
          if (v2) return; /* v2 wins over v1 */
        }
      }
    }
    line = nl ? nl + 1 : NULL;
  }
}

/* Headroom of one (limit, used) pair in per mille, kept if smaller than *best. */
static void consider(int64_t limit, int64_t available, int64_t *best_pm, int64_t *best_limit,
                     int64_t *best_avail) {
  if (limit <= 0 || available < 0) return;
  if (available > limit) available = limit;
  int64_t pm = available * 1000 / limit;
  if (pm < *best_pm) {
    *best_pm = pm;
    *best_limit = limit;
    *best_avail = available;
  }
}

static void set_level(uint64_t now);

/* MemTotal and MemAvailable are the first and third lines of /proc/meminfo (Linux 3.14
 * on), and PSI's "some" line is its first: the head of each file is enough. */
#define PRESSURE_TEXT 512

static __attribute__((noinline)) void read_sources(void) {
  const char *dir = hsm_options.pressure_files[0] ? hsm_options.pressure_files : NULL;
  char text[PRESSURE_TEXT], path[512];
  int64_t pm = 1000, limit = 0, avail = 0, psi = -1;
  hsm_join(path, sizeof path, dir ? dir : "/proc", "/meminfo", NULL);
  if (read_small(path, text, sizeof text) > 0)
    consider(meminfo_field(text, "MemTotal"), meminfo_field(text, "MemAvailable"), &pm, &limit,
             &avail);
  const char *cg = dir;
  if (cg == NULL) cg = cgroup_dir[0] == '-' ? NULL : cgroup_dir; /* (resolved by the caller) */
  if (cg != NULL) {
    int64_t used, high = -1, max;
    if (dir == NULL && cgroup_v1) {
      used = read_number(cg, "memory.usage_in_bytes");
      max = read_number(cg, "memory.limit_in_bytes");
    } else {
      used = read_number(cg, "memory.current");
      high = read_number(cg, "memory.high");
      max = read_number(cg, "memory.max");
    }
    if (used >= 0) {
      if (high > 0) consider(high, high - used, &pm, &limit, &avail);
      if (max > 0) consider(max, max - used, &pm, &limit, &avail);
    }
  }
  hsm_join(path, sizeof path, dir ? dir : "/proc/pressure", dir ? "/memory.pressure" : "/memory",
           NULL);
  if (read_small(path, text, sizeof text) > 0) psi = psi_some_avg10(text);

  atomic_store_explicit(&base_committed,
                        atomic_load_explicit(&hsm_gstats.committed, memory_order_relaxed),
                        memory_order_relaxed);
  atomic_store_explicit(&base_available, limit > 0 ? avail : -1, memory_order_relaxed);
  atomic_store_explicit(&base_limit, limit, memory_order_relaxed);
  atomic_store_explicit(&base_psi, psi, memory_order_relaxed);
  atomic_store_explicit(&hsm_pressure.psi_some, psi, memory_order_relaxed);
  atomic_fetch_add_explicit(&hsm_pressure.checks, 1, memory_order_relaxed);
  (void)pm;
  set_level(hsm_now_ms());
}

/* The level from the last reading and this process's growth since. */
static void set_level(uint64_t now) {
  int64_t limit = atomic_load_explicit(&base_limit, memory_order_relaxed);
  int64_t avail = atomic_load_explicit(&base_available, memory_order_relaxed);
  int64_t psi = atomic_load_explicit(&base_psi, memory_order_relaxed);
  int64_t pm = 1000;
  if (limit > 0 && avail >= 0) {
    int64_t grown = atomic_load_explicit(&hsm_gstats.committed, memory_order_relaxed) -
                    atomic_load_explicit(&base_committed, memory_order_relaxed);
    avail -= grown;
    if (avail < 0) avail = 0;
    if (avail > limit) avail = limit;
    pm = avail * 1000 / limit;
  }
  int level = HSM_PRESSURE_NONE;
  if (pm < HSM_HEADROOM_LOW) level = HSM_PRESSURE_SOME;
  if (pm < HSM_HEADROOM_HIGH || psi >= HSM_PSI_HIGH) level = HSM_PRESSURE_HIGH;
  if (pm < HSM_HEADROOM_CRITICAL || psi >= HSM_PSI_CRITICAL) level = HSM_PRESSURE_CRITICAL;
  /* Every slow path of every thread may pass here: shared lines are only written
   * when a value changes, and the level with one compare-and-swap. */
  uint64_t hold = (uint64_t)(hsm_options.pressure_hold_ms > 0 ? hsm_options.pressure_hold_ms : 0);
  uint64_t until = atomic_load_explicit(&high_until_ms, memory_order_relaxed);
  if (level >= HSM_PRESSURE_HIGH) {
    if (until < now + hold) atomic_store_explicit(&high_until_ms, now + hold, memory_order_relaxed);
  } else if (now < until) {
    level = HSM_PRESSURE_HIGH;
  }
  if (atomic_load_explicit(&hsm_pressure.headroom_pm, memory_order_relaxed) != pm)
    atomic_store_explicit(&hsm_pressure.headroom_pm, pm, memory_order_relaxed);
  if (atomic_load_explicit(&hsm_pressure.available, memory_order_relaxed) != avail)
    atomic_store_explicit(&hsm_pressure.available, avail, memory_order_relaxed);
  if (atomic_load_explicit(&hsm_pressure.limit, memory_order_relaxed) != limit)
    atomic_store_explicit(&hsm_pressure.limit, limit, memory_order_relaxed);
  int old = atomic_load_explicit(&hsm_pressure.level, memory_order_relaxed);
  if (old == level ||
      !atomic_compare_exchange_strong_explicit(&hsm_pressure.level, &old, level,
                                               memory_order_relaxed, memory_order_relaxed))
    return;
  atomic_fetch_add_explicit(&hsm_pressure.level_changes, 1, memory_order_relaxed);
  HSM_TRACE(HSM_EV_PRESSURE, NULL, (const void *)(uintptr_t)level, (uint64_t)pm);
  /* Entering critical: the empty segments and huge mappings kept for reuse go now. */
  if (level == HSM_PRESSURE_CRITICAL) {
    hsm_segment_cache_decay(now, 1);
    hsm_huge_cache_decay(now, 1);
  }
}

void hsm_pressure_init(void) {
  if (hsm_options.pressure && hsm_options.decay_ms > 0 && hsm_options.pressure_files[0] == '\0')
    resolve_cgroup();
}

int hsm_pressure_poll(void) {
  if (!hsm_options.pressure || hsm_options.decay_ms <= 0)
    return atomic_load_explicit(&hsm_pressure.level, memory_order_relaxed);
  uint64_t now = hsm_now_ms();
  uint64_t due = atomic_load_explicit(&next_check_ms, memory_order_relaxed);
  if (now >= due) {
    uint64_t every =
        hsm_options.pressure_check_ms > 0 ? (uint64_t)hsm_options.pressure_check_ms : 0;
    if (atomic_compare_exchange_strong_explicit(&next_check_ms, &due, now + every,
                                                memory_order_relaxed, memory_order_relaxed) &&
        !atomic_flag_test_and_set_explicit(&reading, memory_order_acquire)) {
      int err = errno;
      if (hsm_options.pressure_files[0] == '\0' && cgroup_dir[0] == '\0') resolve_cgroup();
      read_sources(); /* (the cgroup is found at start: hsm_pressure_init) */
      errno = err;
      atomic_flag_clear_explicit(&reading, memory_order_release);
      return atomic_load_explicit(&hsm_pressure.level, memory_order_relaxed);
    }
  }
  if (atomic_load_explicit(&base_limit, memory_order_relaxed) > 0) set_level(now);
  return atomic_load_explicit(&hsm_pressure.level, memory_order_relaxed);
}

long hsm_decay_now(void) {
  long base = hsm_options.decay_ms;
  if (base <= 0 || !hsm_options.pressure) return base;
  switch (atomic_load_explicit(&hsm_pressure.level, memory_order_relaxed)) {
    case HSM_PRESSURE_NONE:
      return base * HSM_DECAY_RELAXED;
    case HSM_PRESSURE_SOME:
      return base;
    case HSM_PRESSURE_HIGH:
      return base / HSM_DECAY_HIGH_DIV;
    default:
      return 0;
  }
}
