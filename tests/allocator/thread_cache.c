/* The thread cache: free puts every small block on the freeing thread's cache
 * for its class, whichever heap owns it, and malloc takes the block freed last
 * first.
 *
 * "lifo": thread B frees its own 64-byte block x, then thread A's y, then its
 * own z, and allocates three 64-byte blocks: z, y, x come back in that order
 * (A's block among B's own); B's figures: frees 3, remote_frees 0 (y was
 * reused, never sent home). Prints "lifo order zyx ok 1 frees F remote_frees
 * R".
 *
 * "exit": owner A allocates N blocks of 48 bytes and N/10 of 12000 bytes (a
 * class above 8 KiB, one block cached), every one filled with a pattern;
 * consumer B frees all of them and N/2 of its own 48-byte blocks (checking each
 * pattern first), so B's caches hold blocks of both heaps when A exits, then
 * when B exits. The main thread then collects the abandoned heaps' queues
 * (hsmalloc_collect) and prints A's and B's rows (page bytes 0: every page of
 * theirs went back): "A allocs X frees F rfq_blocks Q page_bytes P", "B allocs
 * X frees F remote_frees R page_bytes P transfer_out T rfq_blocks Q" (blocks
 * B's cache put into the transfer cache; its own that came home through its
 * queue), and what the main thread's collect sent home of the
 * transfer cache's: "M remote_frees R transfer_in T". Then thread C (adopting
 * an abandoned heap) allocates and checks N blocks: "C ok 1". */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hsmalloc.h"
#include "stages.h"

#define N 3000
#define BIG 12000
#define NBIG (N / 10)

static unsigned char *a_small[N], *a_big[NBIG];
static unsigned a_id, b_id;
static char *y_block;

static unsigned my_heap(void) {
  hsmalloc_heap_stats_t me;
  CHECK(hsmalloc_heap_stats_self(&me) == 0, "no heap");
  return me.id;
}

static void fill(unsigned char *p, size_t n, unsigned char tag) {
  memset(p, tag, n);
}

static void check_fill(const unsigned char *p, size_t n, unsigned char tag) {
  for (size_t i = 0; i < n; i += 7)
    CHECK(p[i] == tag, "byte %zu of %p is %u, not %u", i, p, p[i], tag);
}

static void *lifo_b(void *arg) {
  (void)arg;
  char *x = malloc(64), *z = malloc(64);
  CHECK(x != NULL && z != NULL, "malloc");
  hsmalloc_heap_stats_t before;
  CHECK(hsmalloc_heap_stats_self(&before) == 0, "no heap");
  free(x);
  free(y_block);
  free(z);
  char *first = malloc(64), *second = malloc(64), *third = malloc(64);
  hsmalloc_heap_stats_t after;
  CHECK(hsmalloc_heap_stats_self(&after) == 0, "no heap");
  printf("lifo order_zyx_ok %d frees %llu remote_frees %llu\n",
         first == z && second == y_block && third == x,
         (unsigned long long)(after.frees - before.frees),
         (unsigned long long)(after.remote_frees - before.remote_frees));
  return NULL;
}

static int lifo_case(void) {
  y_block = malloc(64);
  CHECK(y_block != NULL, "malloc");
  pthread_t b;
  CHECK(pthread_create(&b, NULL, lifo_b, NULL) == 0, "pthread_create");
  CHECK(pthread_join(b, NULL) == 0, "pthread_join");
  return 0;
}

static void *owner_a(void *arg) {
  (void)arg;
  for (int i = 0; i < N; i++) {
    a_small[i] = malloc(48);
    CHECK(a_small[i] != NULL, "malloc");
    fill(a_small[i], 48, (unsigned char)i);
  }
  for (int i = 0; i < NBIG; i++) {
    a_big[i] = malloc(BIG);
    CHECK(a_big[i] != NULL, "malloc");
    fill(a_big[i], BIG, (unsigned char)(i + 1));
  }
  a_id = my_heap();
  set_stage(1);
  wait_stage(2); /* B freed them all; A exits with its blocks in B's caches */
  return NULL;
}

static void *consumer_b(void *arg) {
  (void)arg;
  static unsigned char *own[N / 2];
  for (int i = 0; i < N / 2; i++) {
    own[i] = malloc(48);
    CHECK(own[i] != NULL, "malloc");
    fill(own[i], 48, 0xb0);
  }
  b_id = my_heap();
  wait_stage(1);
  for (int i = 0; i < N; i++) {
    check_fill(a_small[i], 48, (unsigned char)i);
    free(a_small[i]);
    if (i < N / 2) {
      check_fill(own[i], 48, 0xb0);
      free(own[i]);
    }
  }
  for (int i = 0; i < NBIG; i++) {
    check_fill(a_big[i], BIG, (unsigned char)(i + 1));
    free(a_big[i]);
  }
  set_stage(2);
  wait_stage(
      3); /* A has exited; B exits with the rest of A's blocks in its caches */
  return NULL;
}

static void *adopter_c(void *arg) {
  (void)arg;
  static unsigned char *mine[N];
  for (int i = 0; i < N; i++) {
    mine[i] = malloc(48);
    CHECK(mine[i] != NULL, "malloc");
    fill(mine[i], 48, (unsigned char)(i * 3));
  }
  for (int i = 0; i < N; i++) {
    check_fill(mine[i], 48, (unsigned char)(i * 3));
    free(mine[i]);
  }
  printf("C ok 1\n");
  return NULL;
}

static hsmalloc_heap_stats_t row(unsigned id) {
  hsmalloc_heap_stats_t r;
  CHECK(hsmalloc_heap_stats_get(id, &r) == 0, "no heap %u", id);
  return r;
}

static int exit_case(void) {
  pthread_t a, b, c;
  CHECK(pthread_create(&a, NULL, owner_a, NULL) == 0, "pthread_create");
  CHECK(pthread_create(&b, NULL, consumer_b, NULL) == 0, "pthread_create");
  CHECK(pthread_join(a, NULL) == 0, "pthread_join");
  set_stage(3);
  CHECK(pthread_join(b, NULL) == 0, "pthread_join");
  hsmalloc_heap_stats_t m0;
  CHECK(hsmalloc_heap_stats_self(&m0) == 0, "no heap");
  hsmalloc_collect();
  hsmalloc_heap_stats_t ra = row(a_id), rb = row(b_id), m1;
  CHECK(hsmalloc_heap_stats_self(&m1) == 0, "no heap");
  printf("A allocs %llu frees %llu rfq_blocks %llu page_bytes %llu\n",
         (unsigned long long)ra.allocs, (unsigned long long)ra.frees,
         (unsigned long long)ra.rfq_blocks, (unsigned long long)ra.page_bytes);
  printf("B allocs %llu frees %llu remote_frees %llu page_bytes %llu "
         "transfer_out %llu rfq_blocks %llu\n",
         (unsigned long long)rb.allocs, (unsigned long long)rb.frees,
         (unsigned long long)rb.remote_frees, (unsigned long long)rb.page_bytes,
         (unsigned long long)rb.transfer_out,
         (unsigned long long)rb.rfq_blocks);
  printf("M remote_frees %llu transfer_in %llu\n",
         (unsigned long long)(m1.remote_frees - m0.remote_frees),
         (unsigned long long)(m1.transfer_in - m0.transfer_in));
  fflush(stdout);
  CHECK(pthread_create(&c, NULL, adopter_c, NULL) == 0, "pthread_create");
  CHECK(pthread_join(c, NULL) == 0, "pthread_join");
  return 0;
}

int main(int argc, char **argv) {
  printf("start\n"); /* stdout's buffer, before the figures */
  fflush(stdout);
  if (argc > 1 && strcmp(argv[1], "exit") == 0)
    return exit_case();
  return lifo_case();
}
