/* diff over repeated runs (tests/e2e/test_diff_runs.py): a count that varies from run to
 * run by a known, seed-driven amount, one that never varies, one that a "regressed"
 * build doubles.
 *   diff_runs SEED [regressed]
 *   noisy:  10,000 + 1,000 x (SEED mod 3) blocks of 32 bytes
 *   steady:  5,000 blocks of 64 bytes
 *   grows:   3,000 blocks of 128 bytes (6,000 when regressed)
 * Each block is freed at once; nothing else allocates (no stdio). */
#include <stdlib.h>
#include <string.h>

void *volatile sink;

__attribute__((noinline)) static void churn(size_t size, long n)
{
    for (long i = 0; i < n; i++) {
        sink = malloc(size);
        free(sink);
    }
}

__attribute__((noinline)) static void noisy(long seed) { churn(32, 10000 + 1000 * (seed % 3)); }
__attribute__((noinline)) static void steady(void) { churn(64, 5000); }
__attribute__((noinline)) static void grows(int regressed) { churn(128, regressed ? 6000 : 3000); }

int main(int argc, char **argv)
{
    long seed = argc > 1 ? atol(argv[1]) : 0;
    int regressed = argc > 2 && strcmp(argv[2], "regressed") == 0;
    noisy(seed);
    steady();
    grows(regressed);
    return 0;
}
