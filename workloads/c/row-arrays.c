/*
 * hs-wl-row-arrays — a C code that keeps a sparse matrix as an array of row pointers
 * and builds it again every step: each step allocates the row-pointer array and one
 * block per row (2..12 doubles, 16-96 B), fills the rows, multiplies a vector with the
 * matrix, then frees every row and the array. Many small malloc/free pairs, few
 * instructions of work each: the counting hot path's C benchmark.
 */
#include "wl_common.h"

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"steps", "times the matrix is built and freed", 30000, 0, 1000000000},
        {"rows", "rows of the matrix", 1000, 1, 100000000},
        {"seed", "random seed", 1, 0, 1000000000},
    };
    wl_parse(argc, argv, "Pointer-per-row arrays (16-96 B rows) rebuilt every step.", opts, 3);
    const long long steps = opts[0].value;
    const size_t rows = (size_t)opts[1].value;
    wl_rng rng;
    wl_rng_seed(&rng, (uint64_t)opts[2].value);

    unsigned char *lengths = wl_check(malloc(rows), "lengths");
    double *x = wl_check(malloc(12 * sizeof *x), "x");
    for (size_t r = 0; r < rows; r++)
        lengths[r] = (unsigned char)wl_rng_range(&rng, 2, 12);
    for (int i = 0; i < 12; i++)
        x[i] = 1.0 / (i + 1);
    uint64_t h = WL_FNV_INIT;
    for (long long s = 0; s < steps; s++) {
        double **m = wl_check(malloc(rows * sizeof *m), "row pointers");
        for (size_t r = 0; r < rows; r++) {
            const size_t n = lengths[(r + (size_t)s) % rows];
            m[r] = wl_check(malloc(n * sizeof **m), "row");
            for (size_t j = 0; j < n; j++)
                m[r][j] = (double)((r + j + (size_t)s) % 7);
        }
        double sum = 0;
        for (size_t r = 0; r < rows; r++) {
            const size_t n = lengths[(r + (size_t)s) % rows];
            double y = 0;
            for (size_t j = 0; j < n; j++)
                y += m[r][j] * x[j];
            if (m[r][n - 1] != (double)((r + n - 1 + (size_t)s) % 7)) {
                fprintf(stderr, "hs-wl-row-arrays: row contents corrupted\n");
                return 1;
            }
            sum += y;
            free(m[r]);
        }
        free(m);
        h = wl_hash_u64(h, (uint64_t)(sum * 1024.0));
    }
    free(x);
    free(lengths);
    printf("row-arrays: %lld steps of %zu rows\n", steps, rows);
    wl_print_checksum(h);
    return 0;
}
