/* The allocator spy on known allocations. Thread A (heap 1) makes N mallocs of
 * 100 bytes, moves R of them with realloc to 5000 bytes, frees the first N/2;
 * thread B (heap 2, started while A lives) frees the other N/2 (remote frees to
 * A); once B is joined, A allocates 200 bytes, whose slow path drains its
 * remote-free queue. A then checks its own row (hsmalloc_heap_stats_self) and
 * prints it: "A allocs .. reallocs .. frees .. requested .. allocated ..
 * rfq_blocks .. rfq_bytes .." Then main makes argv[2] more mallocs of 64 bytes
 * (each freed: a second run to compare), and raises SIGUSR2 argv[1] times (the
 * dump under HSMALLOC_STATS). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"
#include "stages.h"

#define N 1000
#define R 10

static void *blocks[N];

static void *thread_a(void *arg) {
  (void)arg;
  for (int i = 0; i < N; i++) {
    blocks[i] = malloc(100);
    memset(blocks[i], 1, 100);
  }
  for (int i = 0; i < R; i++)
    blocks[i] = realloc(blocks[i], 5000);
  for (int i = 0; i < N / 2; i++)
    free(blocks[i]);
  set_stage(1);
  wait_stage(2); /* B has freed the rest and exited */
  char *volatile p =
      malloc(200); /* volatile: the compiler may not elide the pair */
  p[0] = 1;
  hsmalloc_heap_stats_t me;
  CHECK(hsmalloc_heap_stats_self(&me) == 0, "no heap");
  printf("A id %u allocs %llu reallocs %llu frees %llu requested %llu "
         "allocated %llu "
         "rfq_blocks %llu rfq_bytes %llu remote_frees %llu\n",
         me.id, (unsigned long long)me.allocs, (unsigned long long)me.reallocs,
         (unsigned long long)me.frees, (unsigned long long)me.requested_bytes,
         (unsigned long long)me.allocated_bytes,
         (unsigned long long)me.rfq_blocks, (unsigned long long)me.rfq_bytes,
         (unsigned long long)me.remote_frees);
  free(p);
  return NULL;
}

static void *thread_b(void *arg) {
  (void)arg;
  for (int i = N / 2; i < N; i++)
    free(blocks[i]);
  return NULL;
}

int main(int argc, char **argv) {
  int signals = argc > 1 ? atoi(argv[1]) : 0;
  int extra = argc > 2 ? atoi(argv[2]) : 0;
  pthread_t a, b;
  printf("start\n"); /* stdout's buffer is main's allocation, not A's */
  pthread_create(&a, NULL, thread_a, NULL);
  wait_stage(1);
  pthread_create(&b, NULL, thread_b, NULL);
  pthread_join(b, NULL);
  set_stage(2);
  pthread_join(a, NULL);
  for (int i = 0; i < extra; i++) {
    char *volatile q = malloc(64);
    q[0] = 1;
    free(q);
  }
  hsmalloc_stats_t st;
  hsmalloc_stats_get(&st);
  CHECK(st.reallocs >= R, "reallocs %llu", (unsigned long long)st.reallocs);
  CHECK(st.real_bytes > st.committed &&
            st.virtual_bytes - st.reserved == st.real_bytes - st.committed,
        "real/virtual");
  CHECK(st.overhead_bytes == st.real_bytes - st.allocated_now, "overhead");
  fflush(stdout);
  for (int i = 0; i < signals; i++)
    raise(SIGUSR2);
  return 0;
}
