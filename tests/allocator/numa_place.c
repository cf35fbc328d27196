/* NUMA placement as requested and as done: a 512 KiB block (a large block in a
 * 2 MiB segment) is touched, and hsmalloc_numa_info reports the node in its
 * segment header, the kernel's policy for its pages (get_mempolicy), the node
 * they are on (move_pages) and the caller's node; then 40 MiB is freed and
 * taken again (cached segments reused, by node first), and the contents are
 * checked. "nodes N placing P segment S policy Y policy_node Z resident R
 * thread T binds B reused_same U reused_other O sum X" */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"

#define BIG (512 * 1024)
#define MANY 80

int main(void) {
  char *p = malloc(BIG);
  memset(p, 5, BIG);
  hsmalloc_numa_info_t info;
  CHECK(hsmalloc_numa_info(p, &info) == 0, "info");
  static char *blocks[MANY];
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < MANY; i++) {
      blocks[i] = malloc(BIG);
      memset(blocks[i], i, BIG);
    }
    for (int i = 0; i < MANY; i++)
      free(blocks[i]);
  }
  unsigned long long sum = 0;
  for (int i = 0; i < BIG; i += 4096)
    sum += (unsigned char)p[i];
  hsmalloc_stats_t st;
  hsmalloc_stats_get(&st);
  printf("nodes %d placing %d segment %d policy %d policy_node %d resident %d "
         "thread %d binds %llu "
         "reused_same %llu reused_other %llu sum %llu\n",
         info.nodes, info.placing, info.segment_node, info.policy,
         info.policy_node, info.resident_node, info.thread_node,
         (unsigned long long)st.numa_binds,
         (unsigned long long)st.numa_reused_same_node,
         (unsigned long long)st.numa_reused_other_node, sum);
  free(p);
  return 0;
}
