/*
 * hs-wl-realloc-large — realloc/free churn of 8 KiB..1 MiB blocks over a few slots.
 * Each block carries a marker byte every 4 KiB page (so pages are really touched);
 * after every realloc the markers of the kept prefix are checked.
 */
#include "wl_common.h"

#define PAGE 4096

typedef struct { unsigned char *p; size_t size; unsigned char gen; } slot;

static unsigned char marker(const slot *s, size_t off) { return (unsigned char)(s->gen + off / PAGE); }

static void mark(slot *s, size_t from)
{
    for (size_t off = from; off < s->size; off += PAGE)   /* from: a page multiple */
        s->p[off] = marker(s, off);
}

static uint64_t check(uint64_t h, const slot *s, size_t upto)
{
    for (size_t off = 0; off < upto; off += PAGE)
        if (s->p[off] != marker(s, off)) {
            fprintf(stderr, "hs-wl-realloc-large: block contents lost in realloc\n");
            exit(1);
        }
    return wl_hash_u64(h, upto);
}

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"ops", "malloc/realloc/free operations", 30000, 0, 1000000000},
        {"slots", "blocks alive at most", 16, 1, 100000},
        {"seed", "random seed", 1, 0, 1000000000},
    };
    wl_parse(argc, argv, "realloc/free churn of 8 KiB-1 MiB blocks.", opts, 3);
    const long long ops = opts[0].value;
    const size_t nslots = (size_t)opts[1].value;
    wl_rng rng;
    wl_rng_seed(&rng, (uint64_t)opts[2].value);

    slot *slots = wl_check(calloc(nslots, sizeof *slots), "slots");
    uint64_t h = WL_FNV_INIT;
    for (long long op = 0; op < ops; op++) {
        slot *s = &slots[wl_rng_next(&rng) % nslots];
        const size_t size = (size_t)wl_rng_range(&rng, 8 << 10, 1 << 20);
        if (!s->p) {
            s->size = size;
            s->gen = (unsigned char)op;
            s->p = wl_check(malloc(size), "realloc-large");
            mark(s, 0);
        } else if (wl_rng_next(&rng) % 8 == 0) {
            h = check(h, s, s->size);
            free(s->p);
            s->p = NULL;
        } else {
            const size_t kept = size < s->size ? size : s->size;
            s->p = wl_check(realloc(s->p, size), "realloc-large");
            h = check(h, s, kept - kept % PAGE);
            s->size = size;
            mark(s, kept - kept % PAGE);
        }
    }
    for (size_t i = 0; i < nslots; i++)
        if (slots[i].p) {
            h = check(h, &slots[i], slots[i].size);
            free(slots[i].p);
        }
    free(slots);
    printf("realloc-large: %lld operations over %zu slots\n", ops, nslots);
    wl_print_checksum(h);
    return 0;
}
