/* Options: the HSMALLOC_* environment variables, read at start-up (a malformed
 * number keeps the default). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

hsm_options_t hsm_options = {HSM_DEFAULT_DECAY_MS, HSM_DEFAULT_CACHE_SEGS, 0, 0, ""};

static long env_long(const char *name, long fallback) {
  const char *v = getenv(name);
  if (v == NULL || *v == '\0') return fallback;
  char *end;
  long x = strtol(v, &end, 10);
  return *end == '\0' ? x : fallback;
}

void hsm_options_read(void) {
  hsm_options.decay_ms = env_long("HSMALLOC_DECAY_MS", HSM_DEFAULT_DECAY_MS);
  hsm_options.cache_segments = env_long("HSMALLOC_CACHE_SEGMENTS", HSM_DEFAULT_CACHE_SEGS);
  hsm_options.hugepages = env_long("HSMALLOC_HUGEPAGES", 0) != 0;
  const char *st = getenv("HSMALLOC_STATS");
  hsm_options.stats = 0;
  if (st != NULL && *st != '\0' && strcmp(st, "0") != 0)
    hsm_options.stats = strcmp(st, "json") == 0 ? 2 : 1;
  const char *file = getenv("HSMALLOC_STATS_FILE");
  hsm_options.stats_file[0] = '\0';
  if (file != NULL && strlen(file) < sizeof hsm_options.stats_file)
    strcpy(hsm_options.stats_file, file);
}
