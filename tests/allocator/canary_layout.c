/* Secure mode's canary, read from outside: for every request of 1 to 120 bytes (a block
 * of the request + 8 rounded up to 16, whose size the class table holds exactly there),
 * whether the 8 bytes after the request equal the block's last word, where 8 or more
 * bytes separate them; prints "same S of T". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
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
