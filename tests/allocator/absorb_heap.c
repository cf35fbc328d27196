/* A thread that starts before the thread it follows exits takes over that
 * thread's heap once it is abandoned (larson's workers). Thread A allocates
 * 2048 blocks of 256 bytes (8 pages of 64 KiB), frees every other one (each
 * page half used) and waits; B starts while A still runs (no abandoned heap:
 * B's heap is made new), allocates one block of 32 bytes, and A exits. B then
 * allocates 512 blocks of 256 bytes, while a third thread, C, frees half the
 * blocks A kept (those at i % 4 == 0: remote frees to A's heap, racing B's
 * takeover of it; a quarter of each page stays in use). Prints "landed <n> of
 * 512 new_pages <d>": how many of B's blocks are A's (a block A or C freed),
 * and the pages in use after minus before. Then, after C is done, B allocates
 * 4096 blocks more, keeping all (every block written), and prints "reused <n>
 * live <l> twice <m>": how many of B's blocks are ones A or C freed (1536 when
 * all came home to the heap B runs on), how many are blocks A still holds, and
 * how many B got twice. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsmalloc.h"

#define A_BLOCKS 2048
#define B_BLOCKS 512
#define B_MORE 4096
#define SIZE 256

static void *a_blocks[A_BLOCKS];
static void *b_blocks[B_BLOCKS + B_MORE];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int b_started, c_started, a_exited, c_go, c_done;

static void wait_for(int *flag) {
  pthread_mutex_lock(&lock);
  while (!*flag)
    pthread_cond_wait(&cond, &lock);
  pthread_mutex_unlock(&lock);
}

static void set(int *flag) {
  pthread_mutex_lock(&lock);
  *flag = 1;
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&lock);
}

/* A's blocks: freed by A (odd i), by C (i % 4 == 0), still live (i % 4 == 2) */
static int freed_block(const void *p) {
  for (int i = 0; i < A_BLOCKS; i++)
    if (a_blocks[i] == p)
      return i % 4 != 2;
  return 0;
}

static int live_block(const void *p) {
  for (int i = 2; i < A_BLOCKS; i += 4)
    if (a_blocks[i] == p)
      return 1;
  return 0;
}

static uint64_t pages_now(void) {
  hsmalloc_stats_t st;
  hsmalloc_stats_get(&st);
  return st.pages;
}

static void *thread_a(void *arg) {
  (void)arg;
  for (int i = 0; i < A_BLOCKS; i++) {
    a_blocks[i] = malloc(SIZE);
    memset(a_blocks[i], 'a', SIZE);
  }
  for (int i = 1; i < A_BLOCKS; i += 2)
    free(a_blocks[i]);
  wait_for(&b_started);
  wait_for(&c_started); /* (else C, starting late, would adopt A's heap) */
  return NULL;
}

static void *thread_b(void *arg) {
  (void)arg;
  void *volatile first = malloc(32); /* B's heap, made new: A has not exited */
  set(&b_started);
  wait_for(&a_exited);
  uint64_t before = pages_now();
  set(&c_go); /* C's frees of A's kept blocks race the takeover */
  for (int i = 0; i < B_BLOCKS; i++) {
    b_blocks[i] = malloc(SIZE);
    memset(b_blocks[i], 'b', SIZE);
  }
  long new_pages = (long)(pages_now() - before);
  int landed = 0;
  for (int i = 0; i < B_BLOCKS; i++)
    landed += freed_block(b_blocks[i]);
  printf("landed %d of %d new_pages %ld\n", landed, B_BLOCKS, new_pages);
  wait_for(&c_done);
  for (int i = B_BLOCKS; i < B_BLOCKS + B_MORE; i++) {
    b_blocks[i] = malloc(SIZE);
    memset(b_blocks[i], 'c', SIZE);
  }
  int reused = 0, live = 0, twice = 0;
  for (int i = 0; i < B_BLOCKS + B_MORE; i++) {
    reused += freed_block(b_blocks[i]);
    live += live_block(b_blocks[i]);
    for (int j = 0; j < i; j++)
      twice += b_blocks[j] == b_blocks[i];
  }
  printf("reused %d live %d twice %d\n", reused, live, twice);
  for (int i = 0; i < B_BLOCKS + B_MORE; i++)
    free(b_blocks[i]);
  free(first);
  return NULL;
}

static void *thread_c(void *arg) {
  (void)arg;
  /* C has a heap (its frees go home in batches); the block stays, so that no
   * page of C's empties while B counts pages */
  void *volatile own = malloc(16);
  set(&c_started);
  wait_for(&c_go);
  for (int i = 0; i < A_BLOCKS; i += 4)
    free(a_blocks[i]);
  return own;
}

int main(void) {
  void *volatile warm = malloc(16);
  pthread_t a, b, c;
  if (pthread_create(&a, NULL, thread_a, NULL) != 0)
    return 1;
  if (pthread_create(&c, NULL, thread_c, NULL) != 0)
    return 1;
  if (pthread_create(&b, NULL, thread_b, NULL) != 0)
    return 1;
  pthread_join(a, NULL);
  set(&a_exited);
  pthread_join(c, NULL);
  set(&c_done);
  pthread_join(b, NULL);
  free(warm);
  return 0;
}
