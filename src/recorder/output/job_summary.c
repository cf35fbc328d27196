/*
 * job_summary.c — a rank's part of the job file and the merge of two parts
 * (layer_abi.h: the MPI layer reduces the parts up a tree at MPI_Finalize; job_file.c
 * writes the result at rank 0).
 *
 * A part travels between ranks, so it names regions by path ("solve/[MPI]", the
 * reader's names), not by this process's region ids. Its encoding (in memory and
 * on the wire only, never in a file; x86-64 little-endian like the file):
 *
 *   u32 nregions, nsizes, napis, npeaks, naccess
 *   nregions x (u32 length, bytes path)
 *   nsizes   x (u32 region, u32 reserved, u64 size, u64 count)
 *   napis    x (u32 region, u32 api, u64 calls)
 *   naccess bytes: record --access's section (access/job.c; 0: not measured)
 *   npeaks bytes: the peak stack types (job_peak_stacks.c: a JOB_PEAK_STACKS payload)
 *
 * A merge keeps the first part's region indices and appends the second's new paths.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "access/access.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "count/heap.h"
#include "count/regions.h"
#include "layer_abi.h"
#include "output/job_file.h"
#include "output/job_peak_stacks.h"
#include "output/profile_writer.h"
#include "output/snapshot.h"
#include "timeline/timeline.h"

/* ---- (region, key) -> count ---- */

struct cell {
    uint64_t key, count;
    uint32_t region, used;
};

struct cells {
    struct cell *e;
    uint64_t mask, n;
    struct hsr_arena *arena;
    int failed;
};

static struct cell *cell_find(struct cells *t, uint32_t region, uint64_t key)
{
    uint64_t h = (key * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)region * 0xBF58476D1CE4E5B9ull);
    for (uint64_t i = h ^ (h >> 31);; i++) {
        struct cell *c = &t->e[i & t->mask];
        if (!c->used || (c->region == region && c->key == key))
            return c;
    }
}

static void cell_add(struct cells *t, uint32_t region, uint64_t key, uint64_t count)
{
    if (t->failed)
        return;
    if (!t->e || (t->n + 1) * 2 > t->mask + 1) {
        uint64_t slots = t->e ? (t->mask + 1) * 2 : 256;
        struct cell *e = hsr_arena_alloc(t->arena, slots * sizeof *e);
        if (!e) {
            t->failed = 1;
            return;
        }
        struct cells bigger = {e, slots - 1, 0, t->arena, 0};
        for (uint64_t i = 0; t->e && i <= t->mask; i++)
            if (t->e[i].used) {
                *cell_find(&bigger, t->e[i].region, t->e[i].key) = t->e[i];
                bigger.n++;
            }
        *t = bigger;
    }
    struct cell *c = cell_find(t, region, key);
    if (!c->used) {
        c->used = 1;
        c->region = region;
        c->key = key;
        t->n++;
    }
    c->count += count;
}

/* ---- region paths ---- */

/* (job_file.h: access/job.c keeps its region paths so too) */
uint32_t hsr_job_path_index(struct hsr_job_paths *p, const char *s, uint32_t len)
{
    for (uint32_t i = 0; i < p->n; i++)
        if (p->len[i] == len && memcmp(p->s[i], s, len) == 0)
            return i;
    if (p->n == p->cap) {
        uint32_t cap = p->cap ? p->cap * 2 : 64;
        const char **ns = hsr_arena_alloc(p->arena, cap * sizeof *ns);
        uint32_t *nl = hsr_arena_alloc(p->arena, cap * sizeof *nl);
        if (!ns || !nl) {
            p->failed = 1;
            return 0;
        }
        if (p->n) {
            memcpy(ns, p->s, p->n * sizeof *ns);
            memcpy(nl, p->len, p->n * sizeof *nl);
        }
        p->s = ns;
        p->len = nl;
        p->cap = cap;
    }
    p->s[p->n] = s;
    p->len[p->n] = len;
    return p->n++;
}

/* The reader's path of region id (profile/decode.py region_paths): "(none)" for
 * region 0, its name under region 0, else the parent's path "/" the name. */
static size_t region_path(uint32_t id, char *out, size_t cap)
{
    const struct hsr_region *r = hsr_region_get(id);
    if (id == 0 || r->parent == HS_NO_PARENT)
        return (size_t)snprintf(out, cap, "%s", id == 0 ? "(none)" : r->name);
    if (r->parent == 0)
        return (size_t)snprintf(out, cap, "%s", r->name);
    size_t n = region_path(r->parent, out, cap);
    if (n >= cap)
        return n;
    return n + (size_t)snprintf(out + n, cap - n, "/%s", r->name);
}

size_t hsr_job_region_path(uint32_t id, char *out, size_t cap) { return region_path(id, out, cap); }

static int is_mpi_path(const char *p, size_t len)
{
    static const char mpi[] = "[MPI]";
    for (size_t at = 0; at <= len;) {
        size_t end = at;
        while (end < len && p[end] != '/')
            end++;
        if (end - at == sizeof mpi - 1 && memcmp(p + at, mpi, sizeof mpi - 1) == 0)
            return 1;
        at = end + 1;
    }
    return 0;
}

/* ---- encoding ---- */

struct part {
    struct hsr_job_paths paths;
    struct cells sizes, apis;
};

static void part_init(struct part *p, struct hsr_arena *a)
{
    memset(p, 0, sizeof *p);
    p->paths.arena = p->sizes.arena = p->apis.arena = a;
}

static void put_cells(struct hsr_buf *b, const struct cells *t, int api)
{
    for (uint64_t i = 0; t->e && i <= t->mask; i++) {
        const struct cell *c = &t->e[i];
        if (!c->used)
            continue;
        hsr_buf_u32(b, c->region);
        if (api) {
            hsr_buf_u32(b, (uint32_t)c->key);
        } else {
            hsr_buf_u32(b, 0);
            hsr_buf_u64(b, c->key);
        }
        hsr_buf_u64(b, c->count);
    }
}

#define PART_HEAD 20 /* five u32 */

/* The part, with the access and peak stack types' sections, as one mapping of exactly
 * *len bytes (heapscope__job_free). */
static int part_encode(const struct part *p, const struct hsr_buf *access,
                       const struct hsr_buf *peaks, void **out, size_t *len)
{
    if (p->paths.failed || p->sizes.failed || p->apis.failed || peaks->failed || access->failed)
        return -1;
    struct hsr_buf b = {0};
    hsr_buf_u32(&b, p->paths.n);
    hsr_buf_u32(&b, (uint32_t)p->sizes.n);
    hsr_buf_u32(&b, (uint32_t)p->apis.n);
    hsr_buf_u32(&b, (uint32_t)peaks->len);
    hsr_buf_u32(&b, (uint32_t)access->len);
    for (uint32_t i = 0; i < p->paths.n; i++)
        hsr_buf_str(&b, p->paths.s[i], p->paths.len[i]);
    put_cells(&b, &p->sizes, 0);
    put_cells(&b, &p->apis, 1);
    hsr_buf_bytes(&b, access->p, access->len);
    hsr_buf_bytes(&b, peaks->p, peaks->len);
    void *m = b.failed ? NULL : hsr_map(b.len ? b.len : 1);
    if (m)
        memcpy(m, b.p, b.len);
    *out = m;
    *len = m ? b.len : 0;
    hsr_buf_release(&b);
    return m ? 0 : -1;
}

/* Adds an encoded part (checked against its length) into p. */
static int part_add(struct part *p, const uint8_t *b, size_t len)
{
    if (len == 0)
        return 0; /* a rank without a summary */
    if (len < PART_HEAD || (uint64_t)hsr_get_u32(b + 12) + hsr_get_u32(b + 16) > len - PART_HEAD)
        return -1;
    uint32_t nreg = hsr_get_u32(b), nsizes = hsr_get_u32(b + 4), napis = hsr_get_u32(b + 8);
    len -= hsr_get_u32(b + 12) + hsr_get_u32(b + 16); /* (access, peak stack types: merged apart) */
    size_t at = PART_HEAD;
    uint32_t *map = hsr_arena_alloc(p->paths.arena, (nreg ? nreg : 1) * sizeof *map);
    if (!map)
        return -1;
    for (uint32_t i = 0; i < nreg; i++) {
        if (at + 4 > len)
            return -1;
        uint32_t n = hsr_get_u32(b + at);
        if (n > len - at - 4)
            return -1;
        map[i] = hsr_job_path_index(&p->paths, (const char *)b + at + 4, n);
        at += 4 + n;
    }
    if ((len - at) != (size_t)nsizes * 24 + (size_t)napis * 16)
        return -1;
    for (uint32_t i = 0; i < nsizes; i++, at += 24) {
        uint32_t r = hsr_get_u32(b + at);
        if (r >= nreg)
            return -1;
        cell_add(&p->sizes, map[r], hsr_get_u64(b + at + 8), hsr_get_u64(b + at + 16));
    }
    for (uint32_t i = 0; i < napis; i++, at += 16) {
        uint32_t r = hsr_get_u32(b + at);
        if (r >= nreg)
            return -1;
        cell_add(&p->apis, map[r], hsr_get_u32(b + at + 4), hsr_get_u64(b + at + 8));
    }
    return p->paths.failed ? -1 : 0;
}

/* ---- this rank's summary ---- */

struct capture {
    struct part part;
    struct hsr_arena *arena;
    uint32_t *path_of; /* region id -> path index + 1 */
    uint32_t nregions;
    char *names; /* the paths' bytes (arena) */
    struct heapscope_job_rank *row;
};

static void capture_row(void *ctx, int api, uint32_t region, uint64_t key, uint64_t count)
{
    struct capture *c = ctx;
    if (region >= c->nregions)
        return; /* (a region interned after the path table was made: none under the lock) */
    if (!c->path_of[region]) {
        char buf[2048];
        size_t n = region_path(region, buf, sizeof buf);
        n = n < sizeof buf ? n : sizeof buf - 1;
        char *s = hsr_arena_alloc(c->part.paths.arena, n + 1);
        if (!s) {
            c->part.paths.failed = 1;
            return;
        }
        memcpy(s, buf, n);
        c->path_of[region] = hsr_job_path_index(&c->part.paths, s, (uint32_t)n) + 1;
    }
    uint32_t idx = c->path_of[region] - 1;
    if (api) {
        cell_add(&c->part.apis, idx, key, count);
        return;
    }
    cell_add(&c->part.sizes, idx, key, count);
    int mpi = is_mpi_path(c->part.paths.s[idx], c->part.paths.len[idx]);
    struct heapscope_job_rank *r = c->row;
    *(mpi ? &r->alloc_mpi_blocks : &r->alloc_app_blocks) += count;
    *(mpi ? &r->alloc_mpi_bytes : &r->alloc_app_bytes) += count * key;
}

/* access/job.c: this rank's allocations of a region id and size */
static uint64_t counted(void *ctx, uint32_t region, uint64_t size)
{
    struct capture *c = ctx;
    if (region >= c->nregions || !c->path_of[region] || !c->part.sizes.e)
        return 0;
    struct cell *cell = cell_find(&c->part.sizes, c->path_of[region] - 1, size);
    return cell->used ? cell->count : 0;
}

static void rank_row(struct heapscope_job_rank *row)
{
    struct hsr_timeline_peaks pk;
    hsr_timeline_peaks(&pk);
    if (hsr_heap_watch) { /* the exact peaks, as the rank's HEAP_PEAK chunk (count/heap.c) */
        struct hsr_heap_peaks exact;
        hsr_heap_peaks(&exact);
        row->present |= HEAPSCOPE_JOB_HEAP | HEAPSCOPE_JOB_HEAP_EXACT;
        row->heap_peak = exact.total;
        row->heap_mpi_peak = exact.component;
        row->heap_app_peak = exact.app;
    } else if (pk.n) { /* heap in use sampled without being watched: the samples' maxima */
        row->present |= HEAPSCOPE_JOB_HEAP;
        row->heap_peak = pk.heap;
        row->heap_mpi_peak = pk.heap_component;
        row->heap_app_peak = pk.heap_app > 0 ? pk.heap_app : 0;
    }
    if (pk.rss >= 0) {
        row->present |= HEAPSCOPE_JOB_RSS;
        row->rss_peak = pk.rss;
    }
    if (pk.pss >= 0) {
        row->present |= HEAPSCOPE_JOB_PSS;
        row->pss_peak = pk.pss;
    }
    if (pk.own >= 0) { /* rss/pss above are net of it (timeline.c) */
        row->present |= HEAPSCOPE_JOB_RECORDER;
        row->recorder_peak = pk.own;
    }
    struct hsr_caliper_totals t;
    hsr_calipers_totals(&t);
    if (t.taken) {
        row->present |= HEAPSCOPE_JOB_CALIPERS;
        row->mpi_rss = t.rss_peak; /* the peaks of the running sums, as a rank file's reader */
        row->mpi_pss = t.pss_peak;
    }
}

__attribute__((visibility("default"))) int heapscope__job_summary(int rank, void **part,
                                                                  size_t *len,
                                                                  struct heapscope_job_rank *row)
{
    *part = NULL;
    *len = 0;
    memset(row, 0, sizeof *row);
    row->rank = -1;
    if (!atomic_load(&hsr_recording) || hsr_profile_pid() != (int)getpid())
        return -1;
    int saved = hsr_guard;
    hsr_guard = 1;
    struct hsr_arena arena = {0};
    struct capture c = {.row = row};
    part_init(&c.part, &arena);
    c.nregions = hsr_region_count();
    c.path_of = hsr_arena_alloc(&arena, (c.nregions ? c.nregions : 1) * sizeof *c.path_of);
    int rc = -1;
    if (c.path_of) {
        hsr_snapshot_capture(capture_row, &c);
        rc = hsr_snapshot(HS_REASON_API, 0);
        hsr_snapshot_capture(NULL, NULL);
    }
    if (rc == 0) {
        row->pid = getpid();
        row->reason = HS_REASON_API;
        row->present |= HEAPSCOPE_JOB_COUNTS;
        gethostname(row->host, sizeof row->host - 1);
        rank_row(row);
        struct hsr_buf peaks = {0}, access = {0};
        rc = hsr_job_peaks_own(&peaks, rank) == 0 &&
                     hsr_access_job_own(&access, rank, counted, &c) == 0
                 ? part_encode(&c.part, &access, &peaks, part, len)
                 : -1;
        hsr_buf_release(&peaks);
        hsr_buf_release(&access);
    }
    if (rc != 0)
        memset(row, 0, sizeof *row), row->rank = -1;
    hsr_arena_free(&arena);
    hsr_guard = saved;
    return rc;
}

__attribute__((visibility("default"))) int heapscope__job_merge(const void *a, size_t alen,
                                                                const void *b, size_t blen,
                                                                void **out, size_t *outlen)
{
    int saved = hsr_guard;
    hsr_guard = 1;
    struct hsr_arena arena = {0};
    struct part p;
    part_init(&p, &arena);
    struct hsr_job_part_view va, vb;
    struct hsr_buf peaks = {0}, access = {0};
    /* the peak stack types and the access sections merged apart, then the counts */
    int rc = -1;
    if (hsr_job_part_visit(a, alen, &va) == 0 && hsr_job_part_visit(b, blen, &vb) == 0 &&
        hsr_job_peaks_merge(va.peaks, va.peaks_len, vb.peaks, vb.peaks_len, &peaks) == 0 &&
        hsr_access_job_merge(va.access, va.access_len, vb.access, vb.access_len, &access) == 0 &&
        part_add(&p, a, alen) == 0 && part_add(&p, b, blen) == 0)
        rc = part_encode(&p, &access, &peaks, out, outlen);
    hsr_buf_release(&peaks);
    hsr_buf_release(&access);
    hsr_arena_free(&arena);
    hsr_guard = saved;
    return rc;
}

__attribute__((visibility("default"))) void heapscope__job_free(void *p, size_t len)
{
    if (p)
        hsr_unmap(p, len ? len : 1);
}

/* ---- for job_file.c ---- */

int hsr_job_part_visit(const void *part, size_t len, struct hsr_job_part_view *v)
{
    const uint8_t *b = part;
    memset(v, 0, sizeof *v);
    if (len == 0)
        return 0;
    if (len < PART_HEAD || (uint64_t)hsr_get_u32(b + 12) + hsr_get_u32(b + 16) > len - PART_HEAD)
        return -1;
    v->peaks_len = hsr_get_u32(b + 12);
    v->peaks = b + len - v->peaks_len;
    v->access_len = hsr_get_u32(b + 16);
    v->access = v->peaks - v->access_len;
    len -= v->peaks_len + v->access_len;
    v->nregions = hsr_get_u32(b);
    v->nsizes = hsr_get_u32(b + 4);
    v->napis = hsr_get_u32(b + 8);
    v->regions = b + PART_HEAD;
    size_t at = PART_HEAD;
    for (uint32_t i = 0; i < v->nregions; i++) {
        if (at + 4 > len || hsr_get_u32(b + at) > len - at - 4)
            return -1;
        at += 4 + hsr_get_u32(b + at);
    }
    if (len - at != (size_t)v->nsizes * 24 + (size_t)v->napis * 16)
        return -1;
    v->sizes = b + at;
    v->apis = b + at + (size_t)v->nsizes * 24;
    return 0;
}
