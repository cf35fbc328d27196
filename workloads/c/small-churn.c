/*
 * hs-wl-small-churn — one thread, random replacements over a working set of small
 * blocks: each operation frees a random slot's block (after checking its contents)
 * and puts a new block of 16..256 bytes there. The classic allocator fast path.
 */
#include "wl_common.h"

typedef struct { unsigned char *p; uint32_t size; unsigned char fill; } slot;

static uint64_t retire(uint64_t h, const slot *s)
{
    if (s->p[0] != s->fill || s->p[s->size - 1] != s->fill) {
        fprintf(stderr, "hs-wl-small-churn: block contents corrupted\n");
        exit(1);
    }
    h = wl_hash_u64(h, s->size);
    return wl_hash_u64(h, s->fill);
}

static void fill(slot *s, wl_rng *rng)
{
    s->size = (uint32_t)wl_rng_range(rng, 16, 256);
    s->fill = (unsigned char)wl_rng_next(rng);
    s->p = wl_check(malloc(s->size), "small-churn");
    memset(s->p, s->fill, s->size);
}

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"ops", "replacements", 4000000, 0, 2000000000},
        {"slots", "blocks in the working set", 10000, 1, 100000000},
        {"seed", "random seed", 1, 0, 1000000000},
    };
    wl_parse(argc, argv, "One thread, random 16-256 B replacements over a working set.", opts, 3);
    const long long ops = opts[0].value;
    const size_t nslots = (size_t)opts[1].value;
    wl_rng rng;
    wl_rng_seed(&rng, (uint64_t)opts[2].value);

    slot *slots = wl_check(calloc(nslots, sizeof *slots), "slots");
    for (size_t i = 0; i < nslots; i++)
        fill(&slots[i], &rng);
    uint64_t h = WL_FNV_INIT;
    for (long long op = 0; op < ops; op++) {
        slot *s = &slots[wl_rng_next(&rng) % nslots];
        h = retire(h, s);
        free(s->p);
        fill(s, &rng);
    }
    for (size_t i = 0; i < nslots; i++) {
        h = retire(h, &slots[i]);
        free(slots[i].p);
    }
    free(slots);
    printf("small-churn: %lld replacements over %zu slots\n", ops, nslots);
    wl_print_checksum(h);
    return 0;
}
