/* Short-lived threads and the pages of their classes. ROUNDS rounds of one
 * worker thread each, created once the last one is joined, so that every worker
 * adopts the heap the last one left (heap 1; the main thread has heap 0). A
 * worker allocates COUNT[i] blocks of SIZE[i] for each of the four sizes, in an
 * order that turns by one every round, writes every byte of them, then frees
 * them all and exits (thread exit gives every empty page back to its segment).
 * Per round main prints the slice of each size's page and the resident 4 KiB
 * pages of the segment's slices (mincore; the header's slice 0 left out):
 *   "round R slices S0 S1 S2 S3 resident N"
 * then heap 1's spy figures: "heap segments S real R page_bytes P". */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "hsmalloc.h"

#define ROUNDS 8
#define SEGMENT ((uintptr_t)2 << 20)
#define SLICE ((uintptr_t)64 << 10)

/* 60 KiB, 12 KiB, 64 and 16 bytes carved: 15, 3, 1 and 1 pages of 4 KiB */
static const size_t SIZE[4] = {1024, 512, 64, 16};
static const int COUNT[4] = {60, 24, 1, 1};

static int round_no;
static int slice_of[ROUNDS][4];
static uintptr_t segment;

static void *worker(void *arg) {
  (void)arg;
  static void *blocks[4][64];
  for (int k = 0; k < 4; k++) {
    int i = (k + round_no) % 4;
    for (int j = 0; j < COUNT[i]; j++) {
      blocks[i][j] = malloc(SIZE[i]);
      CHECK(blocks[i][j] != NULL, "malloc(%zu)", SIZE[i]);
      memset(blocks[i][j], 1, SIZE[i]);
    }
    uintptr_t p = (uintptr_t)blocks[i][0];
    CHECK(segment == 0 || (p & ~(SEGMENT - 1)) == segment, "a second segment");
    segment = p & ~(SEGMENT - 1);
    slice_of[round_no][i] = (int)((p - segment) / SLICE);
  }
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < COUNT[i]; j++)
      free(blocks[i][j]);
  return NULL;
}

int main(void) {
  static unsigned char vec[SEGMENT / 4096];
  for (round_no = 0; round_no < ROUNDS; round_no++) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, worker, NULL) == 0, "pthread_create");
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
    CHECK(mincore((void *)segment, SEGMENT, vec) == 0, "mincore");
    int resident = 0;
    for (size_t i = SLICE / 4096; i < SEGMENT / 4096; i++)
      resident += vec[i] & 1;
    int *s = slice_of[round_no];
    printf("round %d slices %d %d %d %d resident %d\n", round_no, s[0], s[1],
           s[2], s[3], resident);
  }
  hsmalloc_heap_stats_t h;
  CHECK(hsmalloc_heap_stats_get(1, &h) == 0, "no heap 1");
  CHECK(h.state == 2, "heap 1 is not abandoned: state %u", h.state);
  printf("heap segments %llu real %llu page_bytes %llu\n",
         (unsigned long long)h.segments, (unsigned long long)h.real_bytes,
         (unsigned long long)h.page_bytes);
  return 0;
}
