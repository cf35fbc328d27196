/* An owner that idles while others free its blocks (larson's main thread): its queue
 * of their frees is taken into the transfer cache, where another thread's empty cache
 * finds the blocks before its own pages.
 *
 * The main thread M allocates 50 blocks of 48 bytes and 9216 of 256 bytes, then waits
 * (no slow path) until the end. W frees the 50 small blocks (they fit its cache) and
 * exits: its cache goes home, the 50 into M's queue. W2 frees 4608 of the 256-byte
 * blocks (1.1 MiB: its cache and the transfer cache hold 272 of them, the rest pushed
 * to M's queue), sleeps 150 ms, frees the other 4608 and exits. T then allocates 50
 * blocks of 48 bytes, keeping them, and prints "taken <n> of 50": how many are M's
 * (50 when W2's push past the queue's threshold, M idle for over 100 ms, moved the
 * queue's small blocks into the transfer cache; 0 when they waited in M's queue and T
 * carved a page of its own). Then M wakes, allocates 50 blocks of 48 bytes and 9216 of
 * 256 bytes, and prints "twice <m> home <h>": how many of M's new blocks T holds (0:
 * no block handed out twice) and how many of its new 256-byte blocks are its own
 * freed ones (all 9216: those W2 put into the transfer cache, taken by M's refills
 * first, then its queue's, the part put back after the take with them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stages.h"

#define SMALL 50
#define SMALL_SIZE 48
#define BIG 9216
#define BIG_SIZE 256

static void *small_m[SMALL], *small_t[SMALL], *big_m[BIG];

static int among(void *const *set, int n, const void *p) {
  for (int i = 0; i < n; i++)
    if (set[i] == p) return 1;
  return 0;
}

static void *thread_w(void *arg) {
  (void)arg;
  for (int i = 0; i < SMALL; i++) free(small_m[i]);
  return NULL;
}

static void *thread_w2(void *arg) {
  (void)arg;
  for (int i = 0; i < BIG / 2; i++) free(big_m[i]);
  usleep(150 * 1000);
  for (int i = BIG / 2; i < BIG; i++) free(big_m[i]);
  return NULL;
}

static void *thread_t(void *arg) {
  (void)arg;
  int taken = 0;
  for (int i = 0; i < SMALL; i++) {
    small_t[i] = malloc(SMALL_SIZE);
    memset(small_t[i], 't', SMALL_SIZE);
    taken += among(small_m, SMALL, small_t[i]);
  }
  printf("taken %d of %d\n", taken, SMALL);
  return NULL;
}

static void run(void *(*fn)(void *)) {
  pthread_t th;
  if (pthread_create(&th, NULL, fn, NULL) != 0 || pthread_join(th, NULL) != 0) abort();
}

int main(void) {
  for (int i = 0; i < SMALL; i++) small_m[i] = malloc(SMALL_SIZE);
  for (int i = 0; i < BIG; i++) {
    big_m[i] = malloc(BIG_SIZE);
    memset(big_m[i], 'm', BIG_SIZE);
  }
  /* M makes no allocation from here until T is done: its heap idles */
  run(thread_w);
  run(thread_w2);
  run(thread_t);
  int twice = 0, home = 0;
  static void *again[BIG];
  for (int i = 0; i < SMALL; i++) twice += among(small_t, SMALL, malloc(SMALL_SIZE));
  for (int i = 0; i < BIG; i++) {
    again[i] = malloc(BIG_SIZE);
    twice += among(small_t, SMALL, again[i]);
  }
  for (int i = 0; i < BIG; i++) home += among(big_m, BIG, again[i]);
  printf("twice %d home %d\n", twice, home);
  return 0;
}
