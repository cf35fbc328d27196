/*
 * job.c — record --access in the job file: each rank's measured figures per (region
 * path, size), summed over the ranks as the counts are, and each rank's own estimates;
 * a section of the part the MPI layer reduces at MPI_Finalize (output/job_summary.c),
 * written by rank 0 as JOB_ACCESS, JOB_ACCESS_SIZES and JOB_ACCESS_RANKS
 * (profile_format.table). The section (memory and wire only, little-endian):
 *
 *   u32 npaths, ncells, nranks, mechanism | u64 sample_mean, poll_ns, unmeasured
 *   npaths x (u32 length, bytes path)
 *   ncells x (u32 path, u32 0, u64 size, u64 samples, measured, live, touched_bytes,
 *             never_touched, read_first, zeroed, huge)
 *   nranks x (u32 rank, u32 0, u64 samples, measured, blocks, bytes, touched_bytes,
 *             untouched_bytes, never_touched, read_first)
 *
 * An empty section (0 bytes): the rank did not measure. A rank's estimates split its own
 * counts of a (region, size) by its measured samples, as the reader does for one file.
 */
#include <string.h>

#include "access/internal.h"
#include "output/job_file.h"
#include "output/profile_writer.h"
#include "stacks/sampling.h"

#define HEAD 40u
#define CELL 80u
#define RANK 72u
enum { C_SAMPLES, C_MEASURED, C_LIVE, C_TOUCHED, C_NEVER, C_READ_FIRST, C_ZEROED, C_HUGE, C_N };

struct cell {
    uint32_t path, used, region; /* region: this rank's id of the path (own section only) */
    uint64_t size, f[C_N];
};

/* paths and cells of a section being built */
struct acc {
    struct hsr_arena *arena;
    struct hsr_job_paths paths;
    struct cell *cells;
    uint64_t mask, ncells;
    uint8_t *ranks; /* encoded rank entries */
    size_t ranks_len, ranks_cap;
    uint32_t nranks, mechanism;
    uint64_t sample_mean, poll_ns, unmeasured;
    int failed, first;
};

static uint32_t path_of(struct acc *a, const char *s, uint32_t len)
{
    uint32_t i = hsr_job_path_index(&a->paths, s, len);
    a->failed |= a->paths.failed;
    return i;
}

static struct cell *cell_at(struct acc *a, uint32_t path, uint64_t size)
{
    if (a->failed)
        return NULL;
    if (!a->cells || (a->ncells + 1) * 2 > a->mask + 1) {
        uint64_t slots = a->cells ? (a->mask + 1) * 2 : 256;
        struct cell *e = hsr_arena_alloc(a->arena, slots * sizeof *e);
        if (!e) {
            a->failed = 1;
            return NULL;
        }
        struct cell *old = a->cells;
        uint64_t old_slots = old ? a->mask + 1 : 0;
        a->cells = e;
        a->mask = slots - 1;
        a->ncells = 0;
        for (uint64_t i = 0; i < old_slots; i++)
            if (old[i].used)
                *cell_at(a, old[i].path, old[i].size) = old[i]; /* (counted there) */
    }
    uint64_t h = (size * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)path * 0xBF58476D1CE4E5B9ull);
    for (uint64_t i = h ^ (h >> 31);; i++) {
        struct cell *c = &a->cells[i & a->mask];
        if (!c->used) {
            c->used = 1;
            c->path = path;
            c->size = size;
            a->ncells++;
            return c;
        }
        if (c->path == path && c->size == size)
            return c;
    }
}

static void rank_add(struct acc *a, const uint8_t *entry)
{
    if (a->ranks_len + RANK > a->ranks_cap) {
        size_t cap = a->ranks_cap ? a->ranks_cap * 2 : 64 * RANK;
        uint8_t *r = hsr_arena_alloc(a->arena, cap);
        if (!r) {
            a->failed = 1;
            return;
        }
        if (a->ranks_len)
            memcpy(r, a->ranks, a->ranks_len);
        a->ranks = r;
        a->ranks_cap = cap;
    }
    memcpy(a->ranks + a->ranks_len, entry, RANK);
    a->ranks_len += RANK;
    a->nranks++;
}

static void settings(struct acc *a, uint32_t mechanism, uint64_t mean, uint64_t poll,
                     uint64_t unmeasured)
{
    if (a->first) {
        a->mechanism = mechanism;
        a->sample_mean = mean;
        a->poll_ns = poll;
        a->first = 0;
    } else if (a->sample_mean != mean) {
        a->sample_mean = 0; /* the ranks sampled differently: no pooled estimate */
    }
    a->unmeasured += unmeasured;
}

static int encode(const struct acc *a, struct hsr_buf *b)
{
    if (a->failed)
        return -1;
    hsr_buf_u32(b, a->paths.n);
    hsr_buf_u32(b, (uint32_t)a->ncells);
    hsr_buf_u32(b, a->nranks);
    hsr_buf_u32(b, a->mechanism);
    hsr_buf_u64(b, a->sample_mean);
    hsr_buf_u64(b, a->poll_ns);
    hsr_buf_u64(b, a->unmeasured);
    for (uint32_t i = 0; i < a->paths.n; i++)
        hsr_buf_str(b, a->paths.s[i], a->paths.len[i]);
    for (uint64_t i = 0; a->cells && i <= a->mask; i++) {
        const struct cell *c = &a->cells[i];
        if (!c->used)
            continue;
        hsr_buf_u32(b, c->path);
        hsr_buf_u32(b, 0);
        hsr_buf_u64(b, c->size);
        for (int k = 0; k < C_N; k++)
            hsr_buf_u64(b, c->f[k]);
    }
    hsr_buf_bytes(b, a->ranks, a->ranks_len);
    return b->failed ? -1 : 0;
}

/* ---- this rank ---- */

int hsr_access_job_own(struct hsr_buf *b, int rank, hsr_access_counted_fn counted, void *ctx)
{
    if (!hsr_access_on)
        return 0; /* an empty section */
    struct hsr_arena arena = {0};
    struct acc a = {.arena = &arena, .paths.arena = &arena, .first = 1};
    settings(&a, (uint32_t)hsr_pages_mechanism, hsr_sample_mean, hsr_watch_poll_ns,
             hsr_access_state.unmeasured_pool + hsr_access_state.unmeasured_align +
                 hsr_access_state.unmeasured_other);
    struct hsr_access_now now;
    hsr_access_now_begin(&now, 0);
    uint32_t *region_path = hsr_arena_alloc(&arena, (size_t)HSR_MAX_REGIONS * sizeof *region_path);
    if (!region_path)
        a.failed = 1;
    for (uint32_t id = 1; id < now.nrows && !a.failed; id++) {
        struct hsr_access_figures f;
        uint64_t live;
        const struct hsr_access_row *r = hsr_access_now_row(&now, id, &f, &live);
        if (!r || r->region >= HSR_MAX_REGIONS)
            continue;
        if (!region_path[r->region]) {
            char buf[2048];
            size_t n = hsr_job_region_path(r->region, buf, sizeof buf);
            n = n < sizeof buf ? n : sizeof buf - 1;
            char *s = hsr_arena_alloc(&arena, n + 1);
            if (!s) {
                a.failed = 1;
                break;
            }
            memcpy(s, buf, n);
            region_path[r->region] = path_of(&a, s, (uint32_t)n) + 1;
        }
        struct cell *c = cell_at(&a, region_path[r->region] - 1, r->size);
        if (!c)
            break;
        c->region = r->region;
        const uint64_t v[C_N] = {f.samples,       f.measured,   live,     f.touched_bytes,
                                 f.never_touched, f.read_first, f.zeroed, f.huge};
        for (int k = 0; k < C_N; k++)
            c->f[k] += v[k];
    }
    hsr_access_now_end(&now);
    /* the rank's estimates: per cell its counts split by its measured samples */
    uint64_t e[8] = {0};
    for (uint64_t i = 0; !a.failed && a.cells && i <= a.mask; i++) {
        const struct cell *c = &a.cells[i];
        if (!c->used)
            continue;
        uint64_t total = counted(ctx, c->region, c->size);
        e[0] += c->f[C_SAMPLES];
        e[1] += c->f[C_MEASURED];
        if (!c->f[C_MEASURED] || total < c->f[C_SAMPLES])
            continue;
        double scale = (double)total / (double)c->f[C_MEASURED];
        e[2] += total;
        e[3] += total * c->size;
        e[4] += (uint64_t)(scale * (double)c->f[C_TOUCHED] + 0.5);
        e[5] += (uint64_t)(scale * (double)(c->f[C_MEASURED] * c->size - c->f[C_TOUCHED]) + 0.5);
        e[6] += (uint64_t)(scale * (double)c->f[C_NEVER] + 0.5);
        e[7] += (uint64_t)(scale * (double)c->f[C_READ_FIRST] + 0.5);
    }
    uint8_t entry[RANK] = {0};
    uint32_t r32 = (uint32_t)rank;
    memcpy(entry, &r32, 4);
    memcpy(entry + 8, e, sizeof e);
    rank_add(&a, entry);
    int rc = encode(&a, b);
    hsr_arena_free(&arena);
    return rc;
}

/* ---- merging two ranks' (or subtrees') sections ---- */

static int add_section(struct acc *a, const uint8_t *p, size_t len)
{
    if (len == 0)
        return 0;
    if (len < HEAD)
        return -1;
    uint32_t npaths = hsr_get_u32(p), ncells = hsr_get_u32(p + 4), nranks = hsr_get_u32(p + 8);
    settings(a, hsr_get_u32(p + 12), hsr_get_u64(p + 16), hsr_get_u64(p + 24), hsr_get_u64(p + 32));
    size_t at = HEAD;
    uint32_t *map = hsr_arena_alloc(a->arena, (npaths ? npaths : 1) * sizeof *map);
    if (!map)
        return -1;
    for (uint32_t i = 0; i < npaths; i++) {
        if (at + 4 > len || hsr_get_u32(p + at) > len - at - 4)
            return -1;
        map[i] = path_of(a, (const char *)p + at + 4, hsr_get_u32(p + at));
        at += 4 + hsr_get_u32(p + at);
    }
    if (len - at != (size_t)ncells * CELL + (size_t)nranks * RANK)
        return -1;
    for (uint32_t i = 0; i < ncells; i++, at += CELL) {
        uint32_t path = hsr_get_u32(p + at);
        if (path >= npaths)
            return -1;
        struct cell *c = cell_at(a, map[path], hsr_get_u64(p + at + 8));
        if (!c)
            return -1;
        for (int k = 0; k < C_N; k++)
            c->f[k] += hsr_get_u64(p + at + 16 + 8 * (size_t)k);
    }
    for (uint32_t i = 0; i < nranks; i++, at += RANK)
        rank_add(a, p + at);
    return a->failed ? -1 : 0;
}

int hsr_access_job_merge(const uint8_t *x, size_t xlen, const uint8_t *y, size_t ylen,
                         struct hsr_buf *out)
{
    if (!xlen && !ylen)
        return 0;
    struct hsr_arena arena = {0};
    struct acc a = {.arena = &arena, .paths.arena = &arena, .first = 1};
    int rc = add_section(&a, x, xlen) == 0 && add_section(&a, y, ylen) == 0 ? encode(&a, out) : -1;
    hsr_arena_free(&arena);
    return rc;
}

/* ---- the job file's chunks ---- */

int hsr_access_job_write(struct hsr_buf *b, const uint8_t *p, size_t len)
{
    if (len == 0)
        return 0;
    struct hsr_arena arena = {0};
    struct acc a = {.arena = &arena, .paths.arena = &arena, .first = 1};
    if (add_section(&a, p, len) != 0) { /* checked whole before anything is written */
        hsr_arena_free(&arena);
        return -1;
    }
    size_t c = hsr_chunk_begin(b, HS_JOB_ACCESS);
    hsr_buf_u32(b, a.nranks);
    hsr_buf_u32(b, a.mechanism);
    hsr_buf_u64(b, a.sample_mean);
    hsr_buf_u64(b, a.poll_ns);
    hsr_buf_u64(b, a.unmeasured);
    hsr_chunk_end(b, c);
    struct hsr_rows sizes = {.type = HS_JOB_ACCESS_SIZES, .per_chunk = HSR_JOB_ROWS_PER_CHUNK};
    for (uint64_t i = 0; a.cells && i <= a.mask; i++) {
        const struct cell *cl = &a.cells[i];
        if (!cl->used)
            continue;
        hsr_rows_next(b, &sizes);
        hsr_buf_str(b, a.paths.s[cl->path], a.paths.len[cl->path]);
        hsr_buf_u64(b, cl->size);
        for (int k = 0; k < C_N; k++)
            hsr_buf_u64(b, cl->f[k]);
    }
    hsr_rows_done(b, &sizes);
    struct hsr_rows ranks = {.type = HS_JOB_ACCESS_RANKS, .per_chunk = HSR_JOB_ROWS_PER_CHUNK};
    for (uint32_t i = 0; i < a.nranks; i++) {
        hsr_rows_next(b, &ranks);
        hsr_buf_bytes(b, a.ranks + (size_t)i * RANK, RANK);
    }
    hsr_rows_done(b, &ranks);
    hsr_arena_free(&arena);
    return 0;
}
