/* The adaptive decay reacting to memory pressure. For each line read on stdin,
 * one phase: allocate 32 MiB in 4000-byte blocks, touch them, free them all,
 * then print the allocator's view: "level L decay D committed C purges P
 * pressure_purges Q checks K headroom H" The test changes the pressure files
 * (HSMALLOC_PRESSURE_FILES) between phases. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsmalloc.h"

#define BLOCK 4000
#define COUNT (32 * 1024 * 1024 / BLOCK)

int main(void) {
  static void *blocks[COUNT];
  char line[64];
  while (fgets(line, sizeof line, stdin) != NULL) {
    for (int i = 0; i < COUNT; i++) {
      blocks[i] = malloc(BLOCK);
      memset(blocks[i], 3, BLOCK);
    }
    for (int i = 0; i < COUNT; i++)
      free(blocks[i]);
    hsmalloc_stats_t st;
    hsmalloc_stats_get(&st);
    printf("level %d decay %lld committed %llu purges %llu pressure_purges "
           "%llu checks %llu "
           "headroom %lld\n",
           st.pressure_level, (long long)st.decay_ms_now,
           (unsigned long long)st.committed, (unsigned long long)st.purges,
           (unsigned long long)st.pressure_purges,
           (unsigned long long)st.pressure_checks,
           (long long)st.headroom_permille);
    fflush(stdout);
  }
  return 0;
}
