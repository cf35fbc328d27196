/*
 * wl_common.h — small helpers shared by the heapscope workloads (C and C++).
 *
 * Every workload is deterministic: its random numbers come from wl_rng seeded by
 * a constant (or --seed), and it ends by printing one line "checksum: <16 hex>"
 * computed from the data it produced, never from addresses or timing, so the line
 * is identical under every allocator (glibc, jemalloc, tcmalloc, mimalloc, hsmalloc).
 *
 * Options are "--name value" pairs (or bare "--flag"); wl_args_* parse them and
 * exit with status 2 and one line on stderr for an unknown option or a bad value.
 */
#ifndef HS_WL_COMMON_H
#define HS_WL_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- deterministic random numbers (xorshift64*) ---- */
typedef struct { uint64_t s; } wl_rng;

static inline void wl_rng_seed(wl_rng *r, uint64_t seed)
{
    r->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (r->s == 0) r->s = 1;
}

static inline uint64_t wl_rng_next(wl_rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    r->s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform integer in [lo, hi] (inclusive). */
static inline uint64_t wl_rng_range(wl_rng *r, uint64_t lo, uint64_t hi)
{
    return lo + wl_rng_next(r) % (hi - lo + 1);
}

/* ---- checksum (FNV-1a, 64 bit) ---- */
#define WL_FNV_INIT 0xcbf29ce484222325ull

static inline uint64_t wl_hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static inline uint64_t wl_hash_u64(uint64_t h, uint64_t v)
{
    return wl_hash_bytes(h, &v, sizeof v);
}

static inline void wl_print_checksum(uint64_t h)
{
    printf("checksum: %016llx\n", (unsigned long long)h);
    fflush(stdout);
}

/* ---- options ---- */
typedef struct {
    const char *name;     /* without the leading "--" */
    const char *help;
    long long value;      /* default on input, parsed value on output */
    long long min, max;   /* accepted range; a flag has min = max = -1 */
} wl_opt;

#define WL_FLAG(name, help) { name, help, 0, -1, -1 }

static inline void wl_usage(FILE *out, const char *prog, const char *what,
                            const wl_opt *opts, int nopts)
{
    fprintf(out, "usage: %s [options]\n%s\noptions:\n", prog, what);
    for (int i = 0; i < nopts; i++) {
        if (opts[i].min == -1 && opts[i].max == -1)
            fprintf(out, "  --%-14s %s\n", opts[i].name, opts[i].help);
        else
            fprintf(out, "  --%-14s %s (default %lld, %lld..%lld)\n", opts[i].name,
                    opts[i].help, opts[i].value, opts[i].min, opts[i].max);
    }
}

/* Parse argv into opts; exits 0 on --help, 2 on a bad option. */
static inline void wl_parse(int argc, char **argv, const char *what, wl_opt *opts, int nopts)
{
    const char *prog = argv[0];
    const char *slash = strrchr(prog, '/');
    if (slash) prog = slash + 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            wl_usage(stdout, prog, what, opts, nopts);
            exit(0);
        }
        int found = -1;
        if (strncmp(a, "--", 2) == 0)
            for (int k = 0; k < nopts; k++)
                if (strcmp(a + 2, opts[k].name) == 0) found = k;
        if (found < 0) {
            fprintf(stderr, "%s: unknown option '%s' (see --help)\n", prog, a);
            exit(2);
        }
        wl_opt *o = &opts[found];
        if (o->min == -1 && o->max == -1) { o->value = 1; continue; }
        if (i + 1 >= argc) {
            fprintf(stderr, "%s: option --%s needs a value\n", prog, o->name);
            exit(2);
        }
        char *end = NULL;
        long long v = strtoll(argv[++i], &end, 10);
        if (*argv[i] == '\0' || *end != '\0' || v < o->min || v > o->max) {
            fprintf(stderr, "%s: --%s wants an integer in %lld..%lld, got '%s'\n",
                    prog, o->name, o->min, o->max, argv[i]);
            exit(2);
        }
        o->value = v;
    }
}

/* Out of memory is not an allocator difference we can checksum: stop loudly. */
static inline void *wl_check(void *p, const char *what)
{
    if (!p) {
        fprintf(stderr, "workload: out of memory in %s\n", what);
        exit(1);
    }
    return p;
}

#ifdef __cplusplus
}
#endif

#endif /* HS_WL_COMMON_H */
