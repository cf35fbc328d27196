/* A thread in its steady state takes no slow path, so the sweeps of the big
 * classes' caches (every 16 slow paths) stop: a block one of them holds stays
 * there with its page. The program writes a 512 KiB large block (kept live: its
 * allocation starts the sweeps' clock), writes and frees a 128 KiB block (its
 * class's cache keeps it; its page, 2 slices, stays in use), sleeps 0.3 s (no
 * slow path, as a program on its fast paths), then writes a large block of
 * 256 KiB. Prints "held <B> faults <n>": the page bytes the heap holds beside
 * the two large blocks once the 256 KiB one is placed (the 128 KiB page still
 * in use, or none), and the minor faults of writing it (getrusage: exact). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "check.h"
#include "hsmalloc.h"

static long page_bytes(void) {
  hsmalloc_heap_stats_t s;
  CHECK(hsmalloc_heap_stats_self(&s) == 0, "hsmalloc_heap_stats_self");
  return (long)s.page_bytes;
}

static long minor_faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

int main(void) {
  char *kept = malloc(512 << 10);
  CHECK(kept != NULL, "malloc(512 KiB)");
  memset(kept, 1, 512 << 10);
  char *b = malloc(128 << 10);
  CHECK(b != NULL, "malloc(128 KiB)");
  memset(b, 2, 128 << 10);
  CHECK(b[(128 << 10) - 1] == 2,
        "the block's last byte"); /* (the writes are not dead) */
  free(b);
  /* no allocation, so no slow path */
  struct timespec pause = {0, 300 * 1000000L};
  nanosleep(&pause, NULL);
  long faults = minor_faults();
  char *l = malloc(256 << 10);
  CHECK(l != NULL, "malloc(256 KiB)");
  long held = page_bytes() - (256 << 10) - (512 << 10);
  memset(l, 3, 256 << 10);
  faults = minor_faults() - faults;
  CHECK(l[(256 << 10) - 1] == 3, "the block's last byte");
  printf("held %ld faults %ld\n", held, faults);
  free(l);
  free(kept);
  return 0;
}
