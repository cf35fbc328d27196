/*
 * hs-wl-hot-odd — a few hot odd sizes among a spread: in each batch 3 of 4 blocks
 * are 72, 104 or 136 bytes, the rest uniform in 64..180; batches are freed in
 * reverse order of allocation (LIFO). The pattern the hot-size classes of seed
 * paper 003 target.
 */
#include "wl_common.h"

static const uint32_t HOT[3] = {72, 104, 136};

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"rounds", "batches allocated and freed", 20000, 0, 1000000000},
        {"batch", "blocks per batch", 200, 1, 10000000},
        {"seed", "random seed", 1, 0, 1000000000},
    };
    wl_parse(argc, argv, "Hot odd sizes (72/104/136 B among 64-180 B), reverse-order frees.", opts, 3);
    const long long rounds = opts[0].value;
    const size_t batch = (size_t)opts[1].value;
    wl_rng rng;
    wl_rng_seed(&rng, (uint64_t)opts[2].value);

    unsigned char **blocks = wl_check(malloc(batch * sizeof *blocks), "batch");
    uint32_t *sizes = wl_check(malloc(batch * sizeof *sizes), "sizes");
    uint64_t h = WL_FNV_INIT;
    for (long long r = 0; r < rounds; r++) {
        for (size_t i = 0; i < batch; i++) {
            const uint64_t x = wl_rng_next(&rng);
            sizes[i] = (x & 3) ? HOT[(x >> 2) % 3] : (uint32_t)(64 + (x >> 8) % 117);
            blocks[i] = wl_check(malloc(sizes[i]), "hot-odd");
            blocks[i][0] = (unsigned char)i;
            blocks[i][sizes[i] - 1] = (unsigned char)r;
        }
        for (size_t i = batch; i-- > 0;) {
            if (blocks[i][0] != (unsigned char)i || blocks[i][sizes[i] - 1] != (unsigned char)r) {
                fprintf(stderr, "hs-wl-hot-odd: block contents corrupted\n");
                return 1;
            }
            h = wl_hash_u64(h, sizes[i]);
            free(blocks[i]);
        }
    }
    free(blocks);
    free(sizes);
    printf("hot-odd: %lld batches of %zu\n", rounds, batch);
    wl_print_checksum(h);
    return 0;
}
