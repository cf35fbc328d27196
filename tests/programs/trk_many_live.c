/* Many blocks live together, for tracking's side table (tests/e2e/
 * test_track_untracked.py, scripts/bench_track_live.py).
 * Arguments: N SIZE [keep]: N blocks of SIZE bytes allocated and held together
 * (their pointers in an mmap'd array, no allocation of its own), then all freed
 * in allocation order, or, with "keep", left live at exit. Nothing else is
 * allocated after the first of them. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    size_t n = strtoull(argv[1], NULL, 10), size = strtoull(argv[2], NULL, 10);
    int keep = argc > 3 && strcmp(argv[3], "keep") == 0;
    void **blocks = mmap(NULL, n * sizeof *blocks + 1, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (blocks == MAP_FAILED)
        return 1;
    for (size_t i = 0; i < n; i++) {
        blocks[i] = malloc(size);
        if (!blocks[i])
            return 1;
        memset(blocks[i], 1, size < 8 ? size : 8);
    }
    if (!keep)
        for (size_t i = 0; i < n; i++)
            free(blocks[i]);
    return 0;
}
