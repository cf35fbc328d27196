/*
 * hs-wl-ghost-cells — the hot sizes of HPC codes just above a class boundary: arrays of
 * 2^k + 2 doubles (a power-of-two block plus one ghost cell at each end), 528, 1040 and
 * 2064 bytes, which classes in steps of 1/8 of a power of two round up to 576/640,
 * 1152/1280 and 2304/2560. One thread keeps a live set of such arrays (1e5 by default,
 * half 528, 3/10 1040, 1/5 2064 bytes) and replaces random ones, checking the ghost
 * cells of each array it frees. --big 1: the same mix one power of four up, 4112, 16400
 * and 65552 bytes (2^9, 2^11 and 2^13 doubles and their two ghost cells), which classes
 * round up to 4608, 18432 and 73728. --fill 1: every element of an array is written
 * (the interior cells as a solver's would be), not only the ghost cells and one inside.
 */
#include "wl_common.h"

typedef struct { double *a; uint32_t n; } slot;

static const uint32_t lengths[2][3] = {{66, 130, 258}, {514, 2050, 8194}}; /* 2^k + 2 doubles */
static int big, fill_all;

static uint32_t pick(wl_rng *rng)
{
    uint64_t r = wl_rng_next(rng) % 10;
    return lengths[big][r < 5 ? 0 : r < 8 ? 1 : 2];
}

static void fill(slot *s, wl_rng *rng, uint64_t tag)
{
    s->n = pick(rng);
    s->a = wl_check(malloc(s->n * sizeof(double)), "ghost-cells");
    s->a[0] = (double)tag;            /* left ghost cell */
    s->a[s->n / 2] = 0.5;             /* the interior, touched once */
    if (fill_all)
        for (uint32_t k = 1; k + 1 < s->n; k++) s->a[k] = 0.5;
    s->a[s->n - 1] = (double)tag + 1; /* right ghost cell */
}

static uint64_t retire(uint64_t h, const slot *s, uint64_t tag)
{
    if (s->a[0] != (double)tag || s->a[s->n - 1] != (double)tag + 1) {
        fprintf(stderr, "hs-wl-ghost-cells: ghost cells corrupted\n");
        exit(1);
    }
    return wl_hash_u64(h, s->n);
}

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"ops", "replacements", 3000000, 0, 2000000000},
        {"arrays", "arrays in the live set", 100000, 1, 100000000},
        {"seed", "random seed", 1, 0, 1000000000},
        {"big", "1: arrays of 514, 2050 and 8194 doubles instead of 66, 130, 258", 0, 0, 1},
        {"fill", "1: write every element of an array, not only its ghost cells", 0, 0, 1},
    };
    wl_parse(argc, argv, "One thread, a live set of 2^k+2-double arrays replaced at random.",
             opts, 5);
    big = (int)opts[3].value;
    fill_all = (int)opts[4].value;
    const long long ops = opts[0].value;
    const size_t n = (size_t)opts[1].value;
    wl_rng rng;
    wl_rng_seed(&rng, (uint64_t)opts[2].value);

    slot *slots = wl_check(calloc(n, sizeof *slots), "slots");
    uint64_t *tags = wl_check(calloc(n, sizeof *tags), "tags");
    for (size_t i = 0; i < n; i++) {
        tags[i] = i;
        fill(&slots[i], &rng, tags[i]);
    }
    uint64_t h = WL_FNV_INIT;
    for (long long op = 0; op < ops; op++) {
        size_t i = wl_rng_next(&rng) % n;
        h = retire(h, &slots[i], tags[i]);
        free(slots[i].a);
        tags[i] = (uint64_t)op;
        fill(&slots[i], &rng, tags[i]);
    }
    for (size_t i = 0; i < n; i++) {
        h = retire(h, &slots[i], tags[i]);
        free(slots[i].a);
    }
    free(tags);
    free(slots);
    printf("ghost-cells: %lld replacements over %zu arrays\n", ops, n);
    wl_print_checksum(h);
    return 0;
}
