/* Sampled stacks where samples are few (tests/e2e/test_sampled_stacks.py): sizes whose
 * allocations a mean of 8192 bytes between samples sees one to a few dozen times, spread
 * over many stack trace types, most of them never sampled. Type t of a size is the path
 * through descend() t levels deep (record with --depth 256: the deepest is 112 levels),
 * and allocates COUNT(size, t) blocks of that size, each freed at once. Single-threaded
 * and deterministic: a fixed HEAPSCOPE_SAMPLE_SEED samples the same allocations every run.
 *
 *   size 48:  400 types of 2: descend() 0..99 levels deep from four lines of main
 *             (~5 samples, nearly every one on a type of its own)
 *   size 64:  one type of 250                          (~2 samples)
 *   size 80:  112 types of 3                           (~3 samples: most types unseen)
 *   size 96:  one type of 2000 and 20 types of 20      (~28 samples)
 *   size 112: 30 types of 1 + floor(400 * 0.8^t)       (~27 samples, a geometric tail)
 *
 * The test computes the same counts (count_of in test_sampled_stacks.py). */
#include <math.h>
#include <stdlib.h>

void *volatile sink;

static long count_of(int size, int t)
{
    switch (size) {
    case 48: return 2;
    case 64: return 250;
    case 80: return 3;
    case 96: return t == 0 ? 2000 : 20;
    default: return 1 + (long)floor(400.0 * pow(0.8, t));
    }
}

__attribute__((noinline)) static void descend(int depth, int size, long count)
{
    if (depth > 0) {
        descend(depth - 1, size, count);
        sink = 0; /* no tail call: every level keeps its frame */
        return;
    }
    for (long i = 0; i < count; i++) {
        sink = malloc((size_t)size);
        free(sink);
    }
}

int main(void)
{
    for (int t = 0; t < 100; t++) {
        descend(t, 48, count_of(48, t));
        descend(t, 48, count_of(48, t));
        descend(t, 48, count_of(48, t));
        descend(t, 48, count_of(48, t));
    }
    static const int sizes[] = {64, 80, 96, 112};
    static const int types[] = {1, 112, 21, 30};
    for (int s = 0; s < 4; s++)
        for (int t = 0; t < types[s]; t++)
            descend(t, sizes[s], count_of(sizes[s], t));
    return 0;
}
