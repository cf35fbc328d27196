/* A thread that starts before the thread it follows exits takes over that thread's heap
 * when the heap is abandoned (larson's workers). Thread A allocates 2048 blocks of 256
 * bytes (8 pages of 64 KiB), frees every other one (each page half used) and waits; B
 * starts while A still runs (no abandoned heap: B's heap is made new), allocates one
 * block of 32 bytes, and A exits. B then allocates 512 blocks of 256 bytes, while a
 * third thread, C, frees the blocks A kept (remote frees to A's heap, racing B's
 * takeover of it). Prints "landed <n> of 512 new_pages <d> freed <k>": how many of B's
 * blocks are ones A freed, the pages made for B's blocks (the global count of pages in
 * use, after minus before), and the blocks C freed; then, after C is done, B allocates
 * 4096 blocks more, keeping the 512 (every block written, none handed out twice), and
 * prints "reused <n> twice <m>": how many of all B holds are blocks of A's (the ones A
 * freed and the ones C freed: C's remote frees came home to the heap B runs on), and
 * the blocks B got twice. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsmalloc.h"

#define A_BLOCKS 2048
#define B_BLOCKS 512
#define B_MORE   4096
#define SIZE     256

static void *a_blocks[A_BLOCKS];
static void *b_blocks[B_BLOCKS + B_MORE];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int b_started, a_exited, c_go, c_done;

static void wait_for(int *flag) {
  pthread_mutex_lock(&lock);
  while (!*flag) pthread_cond_wait(&cond, &lock);
  pthread_mutex_unlock(&lock);
}

static void set(int *flag) {
  pthread_mutex_lock(&lock);
  *flag = 1;
  pthread_cond_broadcast(&cond);
  pthread_mutex_unlock(&lock);
}

/* i's parity: 1 the blocks A freed, 0 the ones C freed, -1 either */
static int a_block(const void *p, int parity) {
  for (int i = 0; i < A_BLOCKS; i++)
    if (a_blocks[i] == p && (parity < 0 || i % 2 == parity)) return 1;
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
  for (int i = 1; i < A_BLOCKS; i += 2) free(a_blocks[i]);
  wait_for(&b_started);
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
  for (int i = 0; i < B_BLOCKS; i++) landed += a_block(b_blocks[i], 1);
  printf("landed %d of %d new_pages %ld\n", landed, B_BLOCKS, new_pages);
  wait_for(&c_done);
  for (int i = B_BLOCKS; i < B_BLOCKS + B_MORE; i++) {
    b_blocks[i] = malloc(SIZE);
    memset(b_blocks[i], 'c', SIZE);
  }
  int reused = 0, twice = 0;
  for (int i = 0; i < B_BLOCKS + B_MORE; i++) {
    reused += a_block(b_blocks[i], -1);
    for (int j = 0; j < i; j++) twice += b_blocks[j] == b_blocks[i];
  }
  printf("reused %d twice %d\n", reused, twice);
  for (int i = 0; i < B_BLOCKS + B_MORE; i++) free(b_blocks[i]);
  free(first);
  return NULL;
}

static void *thread_c(void *arg) {
  (void)arg;
  void *volatile own = malloc(16); /* C has a heap: its frees go home in batches */
  wait_for(&c_go);
  for (int i = 0; i < A_BLOCKS; i += 2) free(a_blocks[i]);
  free(own);
  return NULL;
}

int main(void) {
  void *volatile warm = malloc(16);
  pthread_t a, b, c;
  if (pthread_create(&a, NULL, thread_a, NULL) != 0) return 1;
  if (pthread_create(&c, NULL, thread_c, NULL) != 0) return 1;
  if (pthread_create(&b, NULL, thread_b, NULL) != 0) return 1;
  pthread_join(a, NULL);
  set(&a_exited);
  pthread_join(c, NULL);
  set(&c_done);
  pthread_join(b, NULL);
  free(warm);
  return 0;
}
