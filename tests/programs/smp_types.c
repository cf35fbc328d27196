/* Sampled stacks (tests/e2e/test_sampled_stacks.py): 24 stack trace types with known
 * counts, four of each of six sizes. Function site_<k>() allocates SIZE(k) bytes
 * COUNT(k) times, each block freed at once, so its call path is one type; the
 * program is single-threaded
 * and deterministic, so with a fixed HEAPSCOPE_SAMPLE_SEED it samples the same
 * allocations every run. A thread-free, region-free program: every figure is exact in
 * an all-sizes recording, which the test compares the estimates with.
 * Argument: a multiplier of every count (default 1). */
#include <stdlib.h>

void *volatile sink;

#define SIZE(k) (48 + 400 * ((k) / 4))              /* 48, 448, .. 2048 bytes */
#define COUNT(k) (1000 + 900 * (k))                  /* 1,000 .. 21,700 */

#define SITE(k)                                       \
    __attribute__((noinline)) static void site_##k(long mult) \
    {                                                 \
        for (long i = 0; i < COUNT(k) * mult; i++) {  \
            sink = malloc(SIZE(k));                   \
            free(sink);                               \
        }                                             \
    }
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
SITE(8) SITE(9) SITE(10) SITE(11) SITE(12) SITE(13) SITE(14) SITE(15)
SITE(16) SITE(17) SITE(18) SITE(19) SITE(20) SITE(21) SITE(22) SITE(23)

int main(int argc, char **argv)
{
    long mult = argc > 1 ? atol(argv[1]) : 1;
    site_0(mult); site_1(mult); site_2(mult); site_3(mult); site_4(mult); site_5(mult);
    site_6(mult); site_7(mult); site_8(mult); site_9(mult); site_10(mult); site_11(mult);
    site_12(mult); site_13(mult); site_14(mult); site_15(mult); site_16(mult); site_17(mult);
    site_18(mult); site_19(mult); site_20(mult); site_21(mult); site_22(mult); site_23(mult);
    return 0;
}
