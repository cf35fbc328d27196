/* check.h — the one failure macro of the allocator's C test programs: a failed check
 * prints the file, line, condition and a printf-style detail, then exits 1. */
#ifndef HEAPSCOPE_TEST_CHECK_H
#define HEAPSCOPE_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static _Atomic long checks; /* checks made, for the program's closing line (atomic: threads check too) */

#define CHECK(cond, ...)                                                 \
  do {                                                                   \
    checks++;                                                            \
    if (!(cond)) {                                                       \
      fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);  \
      fprintf(stderr, __VA_ARGS__);                                      \
      fputc('\n', stderr);                                               \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

#endif
