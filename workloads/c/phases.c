/*
 * hs-wl-phases — a phase-structured program: each phase allocates --mb MiB in blocks of
 * 64 B..16 KiB (one in 64 of 128..512 KiB), touches them, frees all but --keep percent
 * (the phase's first blocks, its results allocated before its temporaries; --scatter 1:
 * survivors drawn at random, spread over all the pages),
 * frees the previous phase's survivors, then computes for --compute-ms (no allocation)
 * and reports its resident set against its live heap:
 *   "phase K live_kib L rss_kib R"
 * For the adaptive return of memory (BENCHMARKS.md): under pressure RSS should follow
 * the live heap; without it, the time should not change.
 */
#include <time.h>
#include <unistd.h>

#include "wl_common.h"

static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL || fscanf(f, "%ld %ld", &pages, &resident) != 2) exit(1);
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct { unsigned char *p; size_t size; } block;

int main(int argc, char **argv)
{
    wl_opt opts[] = {
        {"phases", "phases", 8, 1, 100000},
        {"mb", "MiB allocated per phase", 192, 1, 100000},
        {"keep", "percent of a phase's blocks that survive into the next phase", 10, 0, 100},
        {"compute-ms", "computing (no allocation) after each phase's frees", 300, 0, 600000},
        {"seed", "random seed", 1, 0, 1000000000},
        {"scatter", "1: survivors drawn at random instead of the first blocks", 0, 0, 1},
    };
    wl_parse(argc, argv, "phases of allocate a lot, free most, compute.", opts, 6);
    const int scatter = (int)opts[5].value;
    const long long phases = opts[0].value, compute_ms = opts[3].value;
    const size_t budget = (size_t)opts[1].value << 20;
    const unsigned keep = (unsigned)opts[2].value;
    wl_rng rng;
    wl_rng_seed(&rng, (uint64_t)opts[4].value);
    size_t cap = budget / 64 + 16;
    block *cur = wl_check(calloc(cap, sizeof *cur), "blocks");
    block *old = wl_check(calloc(cap, sizeof *old), "blocks");
    size_t n_old = 0;
    uint64_t h = WL_FNV_INIT;
    for (long long ph = 0; ph < phases; ph++) {
        size_t n = 0, total = 0;
        while (total < budget && n < cap) {
            size_t size = wl_rng_next(&rng) % 64 == 0 ? (size_t)wl_rng_range(&rng, 128 << 10, 512 << 10)
                                                      : (size_t)wl_rng_range(&rng, 64, 16 << 10);
            cur[n].p = wl_check(malloc(size), "phases");
            cur[n].size = size;
            for (size_t off = 0; off < size; off += 4096) cur[n].p[off] = (unsigned char)(n + off);
            total += size;
            n++;
        }
        size_t kept = 0;
        for (size_t i = 0; i < n; i++) {
            int survives = scatter ? wl_rng_next(&rng) % 100 < keep : i * 100 < (size_t)keep * n;
            if (survives) cur[kept++] = cur[i];
            else free(cur[i].p);
        }
        for (size_t i = 0; i < n_old; i++) {
            h = wl_hash_u64(h, old[i].p[0]);
            free(old[i].p);
        }
        block *t = old; old = cur; cur = t;
        n_old = kept;
        size_t live = 0;
        for (size_t i = 0; i < n_old; i++) live += old[i].size;
        double until = now_s() + (double)compute_ms / 1000.0;
        volatile uint64_t x = h; /* busy work the compiler keeps */
        while (now_s() < until)
            for (int k = 0; k < 100000; k++) x = x * 6364136223846793005ull + 1442695040888963407ull;
        printf("phase %lld live_kib %zu rss_kib %ld\n", ph, live >> 10, rss_kib());
        fflush(stdout);
    }
    for (size_t i = 0; i < n_old; i++) free(old[i].p);
    free(cur);
    free(old);
    wl_print_checksum(h);
    return 0;
}
