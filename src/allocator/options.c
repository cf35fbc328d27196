/* Options: the HSMALLOC_* environment variables, read at start-up (a malformed
 * number keeps the default). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

hs_options_t hs_options = {HS_DEFAULT_DECAY_MS, HS_DEFAULT_CACHE_SEGS, 0, 0, ""};

static long env_long(const char *name, long fallback) {
  const char *v = getenv(name);
  if (v == NULL || *v == '\0') return fallback;
  char *end;
  long x = strtol(v, &end, 10);
  return *end == '\0' ? x : fallback;
}

void hs_options_read(void) {
  hs_options.decay_ms = env_long("HSMALLOC_DECAY_MS", HS_DEFAULT_DECAY_MS);
  hs_options.cache_segments = env_long("HSMALLOC_CACHE_SEGMENTS", HS_DEFAULT_CACHE_SEGS);
  hs_options.hugepages = env_long("HSMALLOC_HUGEPAGES", 0) != 0;
  const char *st = getenv("HSMALLOC_STATS");
  hs_options.stats = 0;
  if (st != NULL && *st != '\0' && strcmp(st, "0") != 0)
    hs_options.stats = strcmp(st, "json") == 0 ? 2 : 1;
  const char *file = getenv("HSMALLOC_STATS_FILE");
  hs_options.stats_file[0] = '\0';
  if (file != NULL && strlen(file) < sizeof hs_options.stats_file) strcpy(hs_options.stats_file, file);
}
