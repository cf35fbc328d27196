/* A two-thread program in stages (transfer_batches.c): its blocks, its
 * arguments and its main. */
#ifndef HS_TEST_TWO_STAGES_H
#define HS_TEST_TWO_STAGES_H
#include <pthread.h>
#include <stdlib.h>

#include "check.h"
#include "stages.h"

/* Two threads over N blocks of SIZE bytes (argv[1], argv[2]; usage if not):
 * `first` runs until it sets stage 1, then `second` runs to its end; stage 2
 * then lets `first` end. blocks and again hold N pointers each. */
static size_t size;
static int n;
static char **blocks, **again;

static int run_two_stages(int argc, char **argv, const char *usage,
                          void *(*first)(void *), void *(*second)(void *)) {
  CHECK(argc == 3, "%s", usage);
  size = strtoul(argv[1], NULL, 10);
  n = atoi(argv[2]);
  blocks = calloc((size_t)n, sizeof *blocks);
  again = calloc((size_t)n, sizeof *again);
  CHECK(blocks != NULL && again != NULL, "calloc");
  pthread_t a, b;
  CHECK(pthread_create(&a, NULL, first, NULL) == 0, "pthread_create");
  wait_stage(1);
  CHECK(pthread_create(&b, NULL, second, NULL) == 0, "pthread_create");
  CHECK(pthread_join(b, NULL) == 0, "pthread_join");
  set_stage(2);
  CHECK(pthread_join(a, NULL) == 0, "pthread_join");
  return 0;
}
#endif
