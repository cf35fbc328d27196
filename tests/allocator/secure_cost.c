/* Secure mode's cost and layout, measured from outside.
 *   pairs N: N malloc/free pairs over a working set of 256 slots (one slot replaced at a
 *     time, sizes 16 to 1008 from a fixed generator), for an instruction count per pair
 *     under callgrind (its malloc and free toggled on).
 *   layout: for every request of 1 to 120 bytes (a block of the request + 8 rounded up
 *     to 16, whose size the class table holds exactly there), whether the 8 bytes after
 *     the request equal the block's last word, where 8 or more bytes separate them;
 *     prints "same S of T". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;

static int pairs(long n) {
  enum { SLOTS = 256 };
  static void *slot[SLOTS];
  uint64_t x = 88172645463325252ull;
  for (long i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t k = x % SLOTS, size = 16 + ((x >> 20) % 63) * 16;
    free(slot[k]);
    slot[k] = malloc(size);
    sink = slot[k];
  }
  for (size_t k = 0; k < SLOTS; k++) free(slot[k]);
  printf("ok\n");
  return 0;
}

static int layout(void) {
  int same = 0, tried = 0;
  for (size_t n = 1; n <= 120; n++) {
    size_t bs = (n + 8 + 15) & ~(size_t)15;
    if (bs - 8 - n < 8) continue;
    unsigned char *p = malloc(n);
    tried++;
    same += memcmp(p + n, p + bs - 8, 8) == 0;
    free(p);
  }
  printf("same %d of %d\n", same, tried);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "pairs") == 0) return pairs(atol(argv[2]));
  if (argc == 2 && strcmp(argv[1], "layout") == 0) return layout();
  fprintf(stderr, "usage: secure_cost pairs N | layout\n");
  return 2;
}
