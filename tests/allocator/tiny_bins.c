/* 50 requests of 8 bytes and 70 of 16: two classes of 16-byte blocks, which the
 * statistics must tell apart (test_spy.py). No stdio: nothing else allocates.
 */
#include <stdlib.h>

int main(void) {
  void *a[120];
  for (int i = 0; i < 120; i++)
    a[i] = malloc(i < 50 ? 8 : 16);
  for (int i = 0; i < 120; i++)
    free(a[i]);
  return a[0] == NULL;
}
