/* Empty pages of a secure heap kept for reuse (page.c, secure_keep): the main
 * thread allocates 5000 blocks of 48 bytes (class 64 in secure mode: 48 + 8
 * rounded to 16; 1024 blocks a 64 KiB page, so 5 pages), another thread frees
 * them all (they come home through the main heap's queue of other threads'
 * frees), then the main thread allocates one 3000-byte block, of a class it has
 * no block of: its slow path drains the queue and the 64-byte pages are empty.
 * Then 5000 blocks of 48 bytes again. Prints, one "name value" a line: round1
 * the heap's page bytes after the first 5000 drained     the same after the
 * drain (the 3000-byte block's page with them) round2      the same after the
 * second 5000 same        how many of the second 5000 blocks lie in the first
 * 5000's pages */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "hsmalloc.h"

#define BLOCKS 5000
#define SIZE 48
#define PAGE ((uintptr_t)64 * 1024)

static void *first[BLOCKS], *second[BLOCKS];

static long page_bytes(void) {
  hsmalloc_heap_stats_t s;
  CHECK(hsmalloc_heap_stats_self(&s) == 0, "hsmalloc_heap_stats_self");
  return (long)s.page_bytes;
}

static void *free_all(void *arg) {
  (void)arg;
  for (int i = 0; i < BLOCKS; i++)
    free(first[i]);
  return NULL;
}

static int in_first_pages(const void *p) {
  for (int i = 0; i < BLOCKS; i++)
    if (((uintptr_t)first[i] & ~(PAGE - 1)) == ((uintptr_t)p & ~(PAGE - 1)))
      return 1;
  return 0;
}

int main(void) {
  for (int i = 0; i < BLOCKS; i++) {
    first[i] = malloc(SIZE);
    CHECK(first[i] != NULL, "malloc(%d)", SIZE);
    ((char *)first[i])[0] = 1;
  }
  printf("round1 %ld\n", page_bytes());
  pthread_t t;
  CHECK(pthread_create(&t, NULL, free_all, NULL) == 0, "pthread_create");
  CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  void *other = malloc(3000);
  CHECK(other != NULL, "malloc(3000)");
  printf("drained %ld\n", page_bytes());
  int same = 0;
  for (int i = 0; i < BLOCKS; i++) {
    second[i] = malloc(SIZE);
    CHECK(second[i] != NULL, "malloc(%d)", SIZE);
    same += in_first_pages(second[i]);
  }
  printf("round2 %ld\n", page_bytes());
  printf("same %d\n", same);
  for (int i = 0; i < BLOCKS; i++)
    free(second[i]);
  free(other);
  return 0;
}
