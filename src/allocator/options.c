/* Options: the HSMALLOC_* environment variables, read at start-up (a malformed
 * number keeps the default; a malformed HSMALLOC_HOT_SIZES says so on stderr, once).
 * Nothing here allocates: the first read runs inside the process's first malloc. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

hsm_options_t hsm_options = {.decay_ms = HSM_DEFAULT_DECAY_MS,
                             .cache_segments = HSM_DEFAULT_CACHE_SEGS,
                             .hot_detect = 1,
                             .hot_resample_ms = HSM_HOT_RESAMPLE_MS,
                             .pressure = 1,
                             .pressure_check_ms = HSM_PRESSURE_CHECK_MS,
                             .pressure_hold_ms = HSM_PRESSURE_HOLD_MS,
                             .numa = -1,
                             .packed = 1,
                             .site_lanes = 1,
                             .stats_signal = 1,
                             .free_reserve = HSM_PURGE_RESERVE_BYTES};

static long env_long(const char *name, long fallback) {
  const char *v = getenv(name);
  if (v == NULL || *v == '\0') return fallback;
  const char *end;
  long long x = hsm_parse_dec(v, &end);
  return end != v && *end == '\0' ? (long)x : fallback;
}

/* One line on stderr, once per process (the options are read twice). */
static void warn_once(const char *fmt, ...) {
  static int warned;
  if (warned) return;
  warned = 1;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n > sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  ssize_t w = write(2, line, (size_t)n);
  (void)w;
}

/* "@file": the list is read from the file (up to 4 KiB). 0 and a message when not. */
static const char *read_list_file(const char *path, char *buf, size_t cap, const char **why) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *why = "cannot be opened";
    return NULL;
  }
  size_t n = 0;
  ssize_t r = 0;
  while (n < cap - 1 && (r = read(fd, buf + n, cap - 1 - n)) > 0) n += (size_t)r;
  close(fd);
  buf[n] = '\0';
  if (r < 0) {
    *why = "cannot be read";
    return NULL;
  }
  if (n == cap - 1) {
    *why = "is longer than 4 KiB";
    return NULL;
  }
  return buf;
}

/* Sizes separated by commas or white space, each 1..HSM_HOT_MAX_SIZE, rounded up to
 * the hot class that serves them (hsm_hot_class_size: 8 or 16; duplicates after
 * rounding count once). Returns 0 with *why set on a bad token. */
static int parse_sizes(const char *s, size_t *out, int *n, char *bad, size_t badcap,
                       const char **why) {
  *n = 0;
  while (*s) {
    while (*s == ',' || *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    if (*s == '\0') break;
    const char *tok = s;
    while (*s && *s != ',' && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') s++;
    size_t len = (size_t)(s - tok);
    size_t shown = len < 40 && len < badcap - 1 ? len : (badcap - 1 < 40 ? badcap - 1 : 40);
    memcpy(bad, tok, shown); /* (no snprintf: see hsm_join) */
    bad[shown] = '\0';
    size_t v = 0;
    for (size_t i = 0; i < len; i++) {
      if (tok[i] < '0' || tok[i] > '9') {
        *why = "is not a size in bytes";
        return 0;
      }
      if (v <= HSM_HOT_MAX_SIZE) v = v * 10 + (size_t)(tok[i] - '0'); /* else: too big */
    }
    if (v == 0 || v > HSM_HOT_MAX_SIZE) {
      *why = "is outside 1..262144 bytes";
      return 0;
    }
    /* rounded as malloc's classes are: named sizes serve malloc */
    v = hsm_hot_class_size(v, hsm_packing_malloc(hsm_options.packed));
    int dup = 0;
    for (int k = 0; k < *n; k++) dup |= out[k] == v;
    if (dup) continue;
    if (*n == HSM_HOT_PER_HEAP) {
      *why = "is one size too many (at most 8)";
      return 0;
    }
    out[(*n)++] = v;
  }
  if (*n == 0) {
    snprintf(bad, badcap, "(nothing)");
    *why = "names no size";
    return 0;
  }
  return 1;
}

/* HSMALLOC_HOT_SIZES=528,1040,2064 or =@file. Anything wrong: a warning, and the
 * default behaviour (no named sizes, detection as configured). */
static void read_hot_sizes(void) {
  hsm_options.hot_n = 0;
  const char *v = getenv("HSMALLOC_HOT_SIZES");
  if (v == NULL || *v == '\0') return;
  HSM_BIG_BSS static char filebuf[4096];
  const char *list = v, *why = NULL;
  if (v[0] == '@') {
    list = read_list_file(v + 1, filebuf, sizeof filebuf, &why);
    if (list == NULL) {
      warn_once("hsmalloc: HSMALLOC_HOT_SIZES=%.200s: the file %s; using no named hot sizes", v,
                why);
      return;
    }
  }
  size_t sizes[HSM_HOT_PER_HEAP];
  int n;
  char bad[48];
  if (!parse_sizes(list, sizes, &n, bad, sizeof bad, &why)) {
    warn_once("hsmalloc: HSMALLOC_HOT_SIZES=%.200s: '%s' %s; using no named hot sizes", v, bad,
              why);
    return;
  }
  memcpy(hsm_options.hot_sizes, sizes, sizeof sizes);
  hsm_options.hot_n = n;
}

void hsm_options_read(void) {
  hsm_options.decay_ms = env_long("HSMALLOC_DECAY_MS", HSM_DEFAULT_DECAY_MS);
  hsm_options.cache_segments = env_long("HSMALLOC_CACHE_SEGMENTS", HSM_DEFAULT_CACHE_SEGS);
  hsm_options.hugepages = env_long("HSMALLOC_HUGEPAGES", 0) != 0;
  hsm_options.hot_detect = env_long("HSMALLOC_HOT_DETECT", 1) != 0;
  const char *packed = getenv("HSMALLOC_PACKED"); /* the names of hsm_packing_t */
  hsm_options.packed = HSM_PACKED_NEW;
  if (packed != NULL && *packed != '\0') {
    static const char *const names[4] = {"0", "1", "all", "new"};
    int k = 0;
    while (k < 4 && strcmp(packed, names[k]) != 0) k++;
    if (k < 4) hsm_options.packed = k;
    else warn_once("hsmalloc: HSMALLOC_PACKED=%.40s is not 0, new, 1 or all; using new", packed);
  }
  hsm_options.site_lanes = env_long("HSMALLOC_SITE_LANES", 1) != 0;
  hsm_options.transfer = env_long("HSMALLOC_TRANSFER", 1) != 0;
  hsm_options.free_reserve = env_long("HSMALLOC_FREE_RESERVE", HSM_PURGE_RESERVE_BYTES);
  hsm_options.hot_resample_ms = env_long("HSMALLOC_HOT_RESAMPLE_MS", HSM_HOT_RESAMPLE_MS);
  read_hot_sizes();
  hsm_options.pressure = env_long("HSMALLOC_PRESSURE", 1) != 0;
  hsm_options.pressure_check_ms = env_long("HSMALLOC_PRESSURE_CHECK_MS", HSM_PRESSURE_CHECK_MS);
  hsm_options.pressure_hold_ms = env_long("HSMALLOC_PRESSURE_HOLD_MS", HSM_PRESSURE_HOLD_MS);
  const char *files = getenv("HSMALLOC_PRESSURE_FILES"); /* test hook (pressure.c) */
  hsm_options.pressure_files[0] = '\0';
  if (files != NULL && strlen(files) < sizeof hsm_options.pressure_files)
    strcpy(hsm_options.pressure_files, files);
  hsm_options.stats_signal = env_long("HSMALLOC_STATS_SIGNAL", 1) != 0;
  const char *numa = getenv("HSMALLOC_NUMA");
  hsm_options.numa = numa == NULL || *numa == '\0' || strcmp(numa, "auto") == 0 ? -1
                     : strcmp(numa, "0") == 0                                   ? 0
                                                                                : 1;
  const char *trace = getenv("HSMALLOC_TRACE");
  hsm_options.trace_file[0] = '\0';
  if (trace != NULL && strlen(trace) < sizeof hsm_options.trace_file)
    strcpy(hsm_options.trace_file, trace);
  if (hsm_options.trace_file[0] != '\0') hsm_trace_start(); /* trace.c's code stays unmapped */
  const char *st = getenv("HSMALLOC_STATS");
  hsm_options.stats = 0;
  if (st != NULL && *st != '\0' && strcmp(st, "0") != 0)
    hsm_options.stats = strcmp(st, "json") == 0 ? 2 : 1;
  const char *file = getenv("HSMALLOC_STATS_FILE");
  hsm_options.stats_file[0] = '\0';
  if (file != NULL && strlen(file) < sizeof hsm_options.stats_file)
    strcpy(hsm_options.stats_file, file);
}
