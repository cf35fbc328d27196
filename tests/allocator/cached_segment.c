/* A segment taken back from the segment cache keeps its resident free slices until
 * they have been free for the decay delay (segment.c, segment_acquire): it came with a
 * "free since" of 0 (its header cleared) or of its last use, so the owner's next
 * maintenance (every 256 slow paths) gave them back at once, and the next pages faulted
 * them in again (xmalloc-test: 360 madvise calls, 330 MB, in 2 s with an 8 s decay).
 * A large block of 30 slices (1.875 MiB) is written and freed: its segment, all free,
 * goes to the cache with its slices resident. A block of 200,000 bytes (4 slices) then
 * takes the segment back and stays, and 600 more are made and freed after it, a slow
 * path each (two maintenances). Prints "name value" pairs:
 *   same      1 if the small block lies where the large one began (the cached segment)
 *   resident  4 KiB pages resident of the 26 slices after the first small block */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "check.h"

#define SLICE (64 * 1024)
#define BIG   (30 * SLICE - 4096)
#define SMALL 200000

int main(void) {
  char *big = malloc(BIG);
  CHECK(big != NULL, "malloc(%d)", BIG);
  for (size_t k = 0; k < BIG; k += 4096) ((volatile char *)big)[k] = 1; /* not elided */
  free(big);
  char *small = malloc(SMALL);
  CHECK(small != NULL, "malloc(%d)", SMALL);
  small[0] = 1; /* kept: the segment stays the heap's */
  for (int i = 0; i < 600; i++) {
    char *r = malloc(SMALL);
    CHECK(r != NULL, "malloc(%d)", SMALL);
    r[0] = 1;
    free(r);
  }
  /* the 26 slices after the small block's 4 */
  uintptr_t lo = ((uintptr_t)big + 4 * SLICE + 4095) & ~(uintptr_t)4095;
  uintptr_t hi = ((uintptr_t)big + BIG) & ~(uintptr_t)4095;
  static unsigned char vec[30 * SLICE / 4096];
  CHECK(mincore((void *)lo, hi - lo, vec) == 0, "mincore");
  long in = 0;
  for (size_t i = 0; i < (hi - lo) / 4096; i++) in += vec[i] & 1;
  printf("same %d\nresident %ld\n", small == big, in);
  free(small);
  return 0;
}
