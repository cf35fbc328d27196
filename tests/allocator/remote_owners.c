/* A consumer's cache goes home in one batch per owner, each owner's blocks to
 * that owner. Owner A (the main thread, heap 0) allocates 1000 blocks of 64
 * bytes, owner B (heap 1) 900; the consumer (heap 2) frees A's first 100 alone,
 * then A's and B's in turn, and exits. Then A and B each take their queue back
 * (hsmalloc_collect), free nothing more and print: "NAME drained blocks B bytes
 * Y end page_bytes D" (D: page bytes after the collect minus those before it
 * allocated: 0 once every block came home to its own pages), and the consumer's
 * heap (abandoned) is printed as "consumer remote_frees F remote_pushes P" */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"
#include "stages.h"

#define NA 1000
#define NB 900

static void *a[NA], *b[NB];

static hsmalloc_heap_stats_t self(void) {
  hsmalloc_heap_stats_t s;
  CHECK(hsmalloc_heap_stats_self(&s) == 0, "no heap");
  return s;
}

static void take_back(const char *name, const hsmalloc_heap_stats_t *before) {
  hsmalloc_collect();
  hsmalloc_heap_stats_t s = self();
  printf("%s drained blocks %llu bytes %llu end page_bytes %lld\n", name,
         (unsigned long long)(s.rfq_blocks - before->rfq_blocks),
         (unsigned long long)(s.rfq_bytes - before->rfq_bytes),
         (long long)(s.page_bytes - before->page_bytes));
  fflush(stdout);
}

static void *owner_b(void *arg) {
  (void)arg;
  hsmalloc_collect();
  hsmalloc_heap_stats_t before = self();
  for (int i = 0; i < NB; i++) {
    b[i] = malloc(64);
    CHECK(b[i] != NULL, "malloc");
    memset(b[i], 2, 64);
  }
  set_stage(1);
  wait_stage(2);
  take_back("B", &before);
  set_stage(3);
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  for (int i = 0; i < NA - NB; i++)
    free(a[i]);
  for (int i = 0; i < NB; i++) {
    free(a[NA - NB + i]);
    free(b[i]);
  }
  return NULL;
}

static void *nothing(void *arg) { return arg; }

int main(void) {
  /* stdout's buffer and what glibc keeps of a joined thread, before the figures
   */
  printf("start\n");
  fflush(stdout);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, nothing, NULL) == 0, "pthread_create");
  CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  hsmalloc_collect();
  hsmalloc_heap_stats_t before = self();
  CHECK(before.id == 0, "main's heap is %u", before.id);
  for (int i = 0; i < NA; i++) {
    a[i] = malloc(64);
    CHECK(a[i] != NULL, "malloc");
    memset(a[i], 1, 64);
  }
  pthread_t tb, tc;
  CHECK(pthread_create(&tb, NULL, owner_b, NULL) == 0, "pthread_create");
  wait_stage(1);
  CHECK(pthread_create(&tc, NULL, consumer, NULL) == 0, "pthread_create");
  CHECK(pthread_join(tc, NULL) == 0, "pthread_join");
  hsmalloc_heap_stats_t c;
  CHECK(hsmalloc_heap_stats_get(2, &c) == 0, "no heap 2");
  printf("consumer remote_frees %llu remote_pushes %llu\n",
         (unsigned long long)c.remote_frees,
         (unsigned long long)c.remote_pushes);
  take_back("A", &before);
  set_stage(2);
  wait_stage(3);
  CHECK(pthread_join(tb, NULL) == 0, "pthread_join");
  return 0;
}
