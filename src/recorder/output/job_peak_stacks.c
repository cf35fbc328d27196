/*
 * job_peak_stacks.c — the job file's JOB_PEAK_STACKS: who held the heap peak on every
 * rank, reduced inside the job with the counts (each part carries a section,
 * job_summary.c; rank 0 writes the root's, job_file.c).
 *
 * A rank recorded with --track knows, per tracking record, the blocks live at its heap
 * peak (track/peak.c). Its section holds its HSR_JOB_PEAK_PER_RANK largest *types* by
 * those requested bytes. A type is a (region path, call path): the sizes one path
 * allocates are added up, since the ranks of a domain decomposition allocate the same
 * arrays at sizes of their own; blocks tracked without stacks make a (region path,
 * size) type. Frames are (module, return address minus the module's load bias) with
 * the modules named by path and build-id, so a path compares equal on every rank
 * whatever ASLR did. A merge adds the types of two sections: ranks, blocks and bytes
 * summed, the largest bytes with its rank, the range of sizes; it keeps the
 * HSR_JOB_PEAK_KEPT largest so a message of the tree stays bounded, and adds the bytes
 * of the largest type it dropped to missing_bound (a type's sum is short by at most
 * the sum of those; 0: every figure exact). Rank 0 writes the HSR_JOB_PEAK_TOP largest.
 *
 * The section's bytes are the JOB_PEAK_STACKS payload (profile_format.table).
 */
#define _GNU_SOURCE
#include <string.h>

#include "core/pool.h"
#include "output/job_file.h"
#include "output/job_peak_stacks.h"
#include "output/profile_writer.h"
#include "output/snapshot.h"
#include "stacks/modules.h"
#include "stacks/sampling.h"
#include "track/track.h"
#include "track/tracking.h"

/* ---- a set of types ---- */

struct ptype {
    uint32_t region, depth, ranks, max_rank;
    uint64_t size_min, size_max, blocks, bytes, bytes_max;
    const uint64_t *frames; /* depth x fw words: an address, or (module, offset) */
};

struct names { /* strings by index; a module's also has its build-id */
    const uint8_t **s, **id;
    uint32_t *len, *idlen;
    uint32_t n, cap;
};

struct peaks {
    struct hsr_arena *arena;
    unsigned fw; /* words a frame: 1 (this rank's addresses) or 2 (module, offset) */
    uint32_t ranks_tracked;
    uint64_t missing;
    struct names paths, modules;
    struct ptype *t;
    uint32_t n, cap;
    uint32_t *slot; /* type index + 1, by hash */
    uint32_t mask;
    int failed;
};

static void *grow(struct peaks *p, const void *old, size_t n, size_t cap, size_t each)
{
    void *m = hsr_arena_alloc(p->arena, cap * each);
    if (!m)
        p->failed = 1;
    else if (n)
        memcpy(m, old, n * each);
    return m;
}

static uint32_t name_index(struct peaks *p, struct names *t, const void *s, uint32_t len,
                           const void *id, uint32_t idlen)
{
    for (uint32_t i = 0; i < t->n; i++)
        if (t->len[i] == len && t->idlen[i] == idlen && memcmp(t->s[i], s, len) == 0 &&
            (!idlen || memcmp(t->id[i], id, idlen) == 0))
            return i;
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 32;
        const uint8_t **ns = grow(p, t->s, t->n, cap, sizeof *ns);
        const uint8_t **ni = grow(p, t->id, t->n, cap, sizeof *ni);
        uint32_t *nl = grow(p, t->len, t->n, cap, sizeof *nl);
        uint32_t *nil = grow(p, t->idlen, t->n, cap, sizeof *nil);
        if (p->failed)
            return 0;
        t->s = ns, t->id = ni, t->len = nl, t->idlen = nil, t->cap = cap;
    }
    t->s[t->n] = s;
    t->id[t->n] = id;
    t->len[t->n] = len;
    t->idlen[t->n] = idlen;
    return t->n++;
}

/* A type's identity: region, call path, and the size when it has no stack. */
static uint64_t type_hash(const struct peaks *p, const struct ptype *t)
{
    uint64_t h = ((uint64_t)t->region << 32 | t->depth) * 0x9E3779B97F4A7C15ull;
    if (!t->depth)
        h ^= t->size_min * 0xBF58476D1CE4E5B9ull;
    for (uint64_t i = 0; i < (uint64_t)t->depth * p->fw; i++)
        h = (h ^ t->frames[i]) * 0x100000001b3ull;
    return h ^ (h >> 31);
}

static int same_type(const struct peaks *p, const struct ptype *a, const struct ptype *b)
{
    return a->region == b->region && a->depth == b->depth &&
           (a->depth ? memcmp(a->frames, b->frames, (size_t)a->depth * p->fw * 8) == 0
                     : a->size_min == b->size_min);
}

/* Adds t (its frames kept by pointer). same_rank: another record of this rank's type
 * (another size or thread), else another rank's figures. */
static void type_add(struct peaks *p, const struct ptype *t, int same_rank)
{
    if (p->failed)
        return;
    if ((p->n + 1) * 2 > p->mask + 1 || !p->slot) {
        uint32_t slots = p->slot ? (p->mask + 1) * 2 : 64;
        uint32_t *s = hsr_arena_alloc(p->arena, slots * sizeof *s);
        if (!s) {
            p->failed = 1;
            return;
        }
        p->slot = s;
        p->mask = slots - 1;
        for (uint32_t i = 0; i < p->n; i++)
            for (uint64_t h = type_hash(p, &p->t[i]);; h++)
                if (!s[h & p->mask]) {
                    s[h & p->mask] = i + 1;
                    break;
                }
    }
    uint64_t h = type_hash(p, t);
    for (;; h++) {
        uint32_t at = p->slot[h & p->mask];
        if (!at)
            break;
        struct ptype *o = &p->t[at - 1];
        if (!same_type(p, o, t))
            continue;
        o->blocks += t->blocks;
        o->bytes += t->bytes;
        o->size_min = t->size_min < o->size_min ? t->size_min : o->size_min;
        o->size_max = t->size_max > o->size_max ? t->size_max : o->size_max;
        if (same_rank) {
            o->bytes_max = o->bytes;
            return;
        }
        o->ranks += t->ranks;
        if (t->bytes_max > o->bytes_max ||
            (t->bytes_max == o->bytes_max && t->max_rank < o->max_rank)) {
            o->bytes_max = t->bytes_max;
            o->max_rank = t->max_rank;
        }
        return;
    }
    if (p->n == p->cap) {
        uint32_t cap = p->cap ? p->cap * 2 : 64;
        struct ptype *nt = grow(p, p->t, p->n, cap, sizeof *nt);
        if (!nt)
            return;
        p->t = nt;
        p->cap = cap;
    }
    p->t[p->n] = *t;
    p->slot[h & p->mask] = ++p->n;
}

/* The order of the file: most bytes first; then more ranks, the lower max rank. */
static int before(const struct ptype *a, const struct ptype *b)
{
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes;
    if (a->ranks != b->ranks)
        return a->ranks > b->ranks;
    if (a->max_rank != b->max_rank)
        return a->max_rank < b->max_rank;
    return a->size_min < b->size_min;
}

/* The indices of the `limit` first types in order (a selection: limit is small), their
 * count; *dropped: the bytes of the first type left out (0: none). */
static uint32_t select_top(struct peaks *p, uint32_t limit, uint32_t **out, uint64_t *dropped)
{
    uint32_t *idx = hsr_arena_alloc(p->arena, (p->n ? p->n : 1) * sizeof *idx);
    *out = idx;
    *dropped = 0;
    if (!idx) {
        p->failed = 1;
        return 0;
    }
    for (uint32_t i = 0; i < p->n; i++)
        idx[i] = i;
    uint32_t k = p->n < limit ? p->n : limit;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t best = i;
        for (uint32_t j = i + 1; j < p->n; j++)
            if (before(&p->t[idx[j]], &p->t[idx[best]]))
                best = j;
        uint32_t s = idx[i];
        idx[i] = idx[best];
        idx[best] = s;
    }
    for (uint32_t j = k; j < p->n; j++)
        if (p->t[idx[j]].bytes > *dropped)
            *dropped = p->t[idx[j]].bytes;
    return k;
}

/* ---- encoding (fw 2) ---- */

static void put_names(struct hsr_buf *b, const struct names *t, const uint32_t *order, uint32_t n,
                      int ids)
{
    hsr_buf_u32(b, n);
    for (uint32_t i = 0; i < n; i++) {
        hsr_buf_str(b, (const char *)t->s[order[i]], t->len[order[i]]);
        if (ids) {
            hsr_buf_u32(b, t->idlen[order[i]]);
            hsr_buf_bytes(b, t->id[order[i]], t->idlen[order[i]]);
        }
    }
}

/* The `limit` first types, with the paths and modules they name (renumbered). */
static int peaks_write(struct peaks *p, uint32_t limit, struct hsr_buf *b)
{
    uint32_t *idx;
    uint64_t dropped;
    uint32_t k = select_top(p, limit, &idx, &dropped);
    uint32_t np = p->paths.n ? p->paths.n : 1, nm = p->modules.n ? p->modules.n : 1;
    uint32_t *path_new = hsr_arena_alloc(p->arena, np * 2 * sizeof *path_new);
    uint32_t *mod_new = hsr_arena_alloc(p->arena, nm * 2 * sizeof *mod_new);
    if (p->failed || !path_new || !mod_new)
        return -1;
    uint32_t *path_old = path_new + np, *mod_old = mod_new + nm, paths = 0, mods = 0;
    for (uint32_t i = 0; i < k; i++) {
        const struct ptype *t = &p->t[idx[i]];
        if (!path_new[t->region]) {
            path_old[paths] = t->region;
            path_new[t->region] = ++paths;
        }
        for (uint32_t f = 0; f < t->depth; f++) {
            uint64_t m = t->frames[2 * f];
            if (m != HS_NO_MODULE && !mod_new[m]) {
                mod_old[mods] = (uint32_t)m;
                mod_new[m] = ++mods;
            }
        }
    }
    hsr_buf_u32(b, p->ranks_tracked);
    hsr_buf_u32(b, HSR_JOB_PEAK_PER_RANK);
    hsr_buf_u64(b, p->missing + dropped);
    put_names(b, &p->paths, path_old, paths, 0);
    put_names(b, &p->modules, mod_old, mods, 1);
    hsr_buf_u32(b, k);
    for (uint32_t i = 0; i < k; i++) {
        const struct ptype *t = &p->t[idx[i]];
        hsr_buf_u32(b, path_new[t->region] - 1);
        hsr_buf_u32(b, t->depth);
        hsr_buf_u32(b, t->ranks);
        hsr_buf_u32(b, t->max_rank);
        const uint64_t v[] = {t->size_min, t->size_max, t->blocks, t->bytes, t->bytes_max};
        hsr_buf_bytes(b, v, sizeof v);
        for (uint32_t f = 0; f < t->depth; f++) {
            uint64_t m = t->frames[2 * f];
            hsr_buf_u32(b, m == HS_NO_MODULE ? HS_NO_MODULE : mod_new[m] - 1);
        }
        for (uint32_t f = 0; f < t->depth; f++)
            hsr_buf_u64(b, t->frames[2 * f + 1]);
    }
    return b->failed ? -1 : 0;
}

/* ---- decoding: a section's types added into p (fw 2) ---- */

struct rd {
    const uint8_t *p;
    size_t len, at;
    int bad;
};

static const uint8_t *take(struct rd *r, size_t n)
{
    if (r->bad || n > r->len - r->at) {
        r->bad = 1;
        return NULL;
    }
    r->at += n;
    return r->p + r->at - n;
}

static uint32_t rd_u32(struct rd *r)
{
    uint32_t v = 0;
    const uint8_t *s = take(r, 4);
    if (s)
        memcpy(&v, s, 4);
    return v;
}

static uint64_t rd_u64(struct rd *r)
{
    uint64_t v = 0;
    const uint8_t *s = take(r, 8);
    if (s)
        memcpy(&v, s, 8);
    return v;
}

static int peaks_read(struct peaks *p, const uint8_t *b, size_t len)
{
    if (len == 0)
        return 0; /* a rank without a summary */
    struct rd r = {b, len, 0, 0};
    p->ranks_tracked += rd_u32(&r);
    rd_u32(&r);
    p->missing += rd_u64(&r);
    uint32_t np = rd_u32(&r);
    uint32_t *pmap = np <= len ? hsr_arena_alloc(p->arena, ((size_t)np + 1) * 4) : NULL;
    if (!pmap)
        return -1;
    for (uint32_t i = 0; i < np && !r.bad; i++) {
        uint32_t n = rd_u32(&r);
        const uint8_t *s = take(&r, n);
        pmap[i] = s ? name_index(p, &p->paths, s, n, NULL, 0) : 0;
    }
    uint32_t nm = rd_u32(&r);
    uint32_t *mmap_ = nm <= len ? hsr_arena_alloc(p->arena, ((size_t)nm + 1) * 4) : NULL;
    if (!mmap_)
        return -1;
    for (uint32_t i = 0; i < nm && !r.bad; i++) {
        uint32_t n = rd_u32(&r);
        const uint8_t *s = take(&r, n);
        uint32_t idn = rd_u32(&r);
        const uint8_t *id = take(&r, idn);
        mmap_[i] = r.bad ? 0 : name_index(p, &p->modules, s, n, id, idn);
    }
    uint32_t nt = rd_u32(&r);
    for (uint32_t i = 0; i < nt && !r.bad && !p->failed; i++) {
        struct ptype t;
        t.region = rd_u32(&r);
        t.depth = rd_u32(&r);
        t.ranks = rd_u32(&r);
        t.max_rank = rd_u32(&r);
        t.size_min = rd_u64(&r);
        t.size_max = rd_u64(&r);
        t.blocks = rd_u64(&r);
        t.bytes = rd_u64(&r);
        t.bytes_max = rd_u64(&r);
        if (r.bad || t.region >= np || t.depth > (len - r.at) / 12)
            return -1;
        t.region = pmap[t.region];
        uint64_t *f = hsr_arena_alloc(p->arena, ((size_t)t.depth * 2 + 1) * 8);
        if (!f)
            return -1;
        for (uint32_t d = 0; d < t.depth; d++) {
            uint32_t m = rd_u32(&r);
            if (m != HS_NO_MODULE && m >= nm)
                return -1;
            f[2 * d] = m == HS_NO_MODULE ? HS_NO_MODULE : mmap_[m];
        }
        for (uint32_t d = 0; d < t.depth; d++)
            f[2 * d + 1] = rd_u64(&r);
        t.frames = f;
        type_add(p, &t, 0);
    }
    return r.bad || r.at != len || p->failed ? -1 : 0;
}

/* ---- this rank ---- */

struct module {
    uint64_t bias;
    uint32_t nranges, idlen, pathlen;
    const uint8_t *id, *path, *ranges; /* ranges: nranges x (u64 lo, u64 hi) */
};

/* The MODULES payload (stacks/modules.c, as the rank's snapshot lists them) parsed. */
static uint32_t parse_modules(struct hsr_arena *a, const struct hsr_buf *mb, struct module **out)
{
    struct rd r = {mb->p, mb->len, 0, 0};
    uint32_t n = rd_u32(&r);
    struct module *m = n <= mb->len ? hsr_arena_alloc(a, ((size_t)n + 1) * sizeof *m) : NULL;
    *out = m;
    if (!m)
        return 0;
    uint32_t i = 0;
    for (; i < n && !r.bad; i++) {
        m[i].bias = rd_u64(&r);
        m[i].nranges = rd_u32(&r);
        m[i].idlen = rd_u32(&r);
        m[i].id = take(&r, m[i].idlen);
        m[i].pathlen = rd_u32(&r);
        m[i].path = take(&r, m[i].pathlen);
        m[i].ranges = take(&r, (size_t)m[i].nranges * 16);
    }
    return r.bad ? 0 : i;
}

/* The first module (the symbolizer's order) whose code holds the call (address - 1). */
static const struct module *module_of(const struct module *m, uint32_t n, uint64_t address)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < m[i].nranges; j++) {
            uint64_t lo, hi;
            memcpy(&lo, m[i].ranges + 16 * j, 8);
            memcpy(&hi, m[i].ranges + 16 * j + 8, 8);
            if (address - 1 >= lo && address - 1 < hi)
                return &m[i];
        }
    return NULL;
}

/* This rank's K largest types, in place of p's raw ones (fw 1 -> 2). */
static void convert(struct peaks *raw, struct peaks *p, int rank, const struct module *mods,
                    uint32_t nmods)
{
    uint32_t *idx;
    uint64_t dropped;
    uint32_t k = select_top(raw, HSR_JOB_PEAK_PER_RANK, &idx, &dropped);
    for (uint32_t i = 0; i < k && !p->failed; i++) {
        struct ptype t = raw->t[idx[i]];
        char buf[2048];
        size_t n = hsr_job_region_path(t.region, buf, sizeof buf);
        n = n < sizeof buf ? n : sizeof buf - 1;
        char *s = hsr_arena_alloc(p->arena, n + 1);
        uint64_t *f = hsr_arena_alloc(p->arena, ((size_t)t.depth * 2 + 1) * 8);
        if (!s || !f) {
            p->failed = 1;
            return;
        }
        memcpy(s, buf, n);
        t.region = name_index(p, &p->paths, s, (uint32_t)n, NULL, 0);
        for (uint32_t d = 0; d < t.depth; d++) {
            const struct module *m = module_of(mods, nmods, t.frames[d]);
            f[2 * d] =
                m ? name_index(p, &p->modules, m->path, m->pathlen, m->id, m->idlen) : HS_NO_MODULE;
            f[2 * d + 1] = m ? t.frames[d] - m->bias : t.frames[d];
        }
        t.frames = f;
        t.ranks = 1;
        t.max_rank = (uint32_t)rank;
        t.bytes_max = t.bytes;
        type_add(p, &t, 0);
    }
}

/* ---- sampled stacks: the blocks at the peak split among the paths ---- */

/* Per (region, size): its blocks live at the peak, and those of them that were samples. */
struct cell {
    uint32_t used, region;
    uint64_t size;
    int64_t all, sampled, given;
};

static struct cell *cell_of(struct cell *cells, uint64_t mask, uint32_t region, uint64_t size)
{
    for (uint64_t h = (size * 0x9E3779B97F4A7C15ull) ^ region;; h++) {
        struct cell *c = &cells[h & mask];
        if (!c->used) {
            *c = (struct cell){.used = 1, .region = region, .size = size};
            return c;
        }
        if (c->region == region && c->size == size)
            return c;
    }
}

/* With sampled stacks (record --track's default) a record with frames holds the sampled
 * blocks of its path, the one without the rest of its (region, size). The reader splits
 * every figure of a size among its paths by their sampled blocks (profile/sampling.py);
 * the rank's section does the same for the blocks at the peak, so a path's figure is an
 * estimate of all its blocks, not its samples; a size none of whose blocks at the peak
 * was sampled keeps them. NULL when not sampling (or no memory: the raw figures). */
static struct cell *sampled_cells(struct hsr_arena *arena, uint64_t *mask)
{
    if (!hsr_sample_mean)
        return NULL;
    uint64_t n = 0;
    for (struct hsr_track_rec *r = hsr_track_records(); r; r = r->next)
        n++;
    uint64_t slots = 16;
    while (slots < 2 * n)
        slots *= 2;
    struct cell *cells = hsr_arena_alloc(arena, slots * sizeof *cells);
    if (!cells)
        return NULL;
    *mask = slots - 1;
    for (struct hsr_track_rec *r = hsr_track_records(); r; r = r->next) {
        int64_t at = atomic_load_explicit(&r->live_at_peak, memory_order_relaxed);
        if (at <= 0 || !r->size)
            continue;
        struct cell *c = cell_of(cells, *mask, r->region, r->size);
        c->all += at;
        if (r->frames)
            c->sampled += at;
    }
    return cells;
}

/* A record's blocks at the peak, estimated when sampling: the paths first, each share
 * rounded down (as profile/sampling.py does for the blocks at the peak), then what they
 * left to the size's record. */
static int64_t at_peak(struct hsr_track_rec *r, int64_t at, struct cell *cells, uint64_t mask)
{
    if (!cells)
        return at;
    struct cell *c = cell_of(cells, mask, r->region, r->size);
    if (r->frames) {
        int64_t share = (int64_t)((unsigned __int128)c->all * (uint64_t)at / (uint64_t)c->sampled);
        c->given += share;
        return share;
    }
    return c->sampled ? (c->all > c->given ? c->all - c->given : 0) : at;
}

int hsr_job_peaks_own(struct hsr_buf *out, int rank)
{
    struct hsr_arena arena = {0};
    struct peaks p = {.arena = &arena, .fw = 2};
    struct hsr_buf mb = {0};
    if (hsr_track_on) {
        struct peaks raw = {.arena = &arena, .fw = 1};
        p.ranks_tracked = 1;
        hsr_track_peak_now(); /* (the snapshot just did: a peak reached since) */
        uint64_t mask = 0;
        struct cell *cells = sampled_cells(&arena, &mask);
        for (int paths = 1; paths >= 0; paths--) /* paths first: sizes get what is left */
            for (struct hsr_track_rec *r = hsr_track_records(); r; r = r->next) {
                int64_t at = atomic_load_explicit(&r->live_at_peak, memory_order_relaxed);
                if (at <= 0 || !r->size || (r->frames != NULL) != paths)
                    continue;
                at = at_peak(r, at, cells, mask);
                if (at <= 0)
                    continue;
                struct ptype t = {.region = r->region,
                                  .depth = r->frames ? r->depth : 0,
                                  .size_min = r->size,
                                  .size_max = r->size,
                                  .blocks = (uint64_t)at,
                                  .bytes = (uint64_t)at * r->size,
                                  .frames = r->frames};
                type_add(&raw, &t, 1);
            }
        /* the module list as the snapshot writes it (its encoder's state is the dump's) */
        hsr_dump_lock_for_fork();
        hsr_modules_write(&mb);
        hsr_dump_unlock_for_fork();
        struct module *mods = NULL;
        uint32_t nmods = mb.failed ? 0 : parse_modules(&arena, &mb, &mods);
        if (raw.failed || mb.failed || (!nmods && raw.n))
            p.failed = 1;
        else
            convert(&raw, &p, rank, mods, nmods);
    }
    int rc = p.failed ? -1 : peaks_write(&p, HSR_JOB_PEAK_PER_RANK, out);
    hsr_buf_release(&mb);
    hsr_arena_free(&arena);
    return rc;
}

int hsr_job_peaks_merge(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
                        struct hsr_buf *out)
{
    struct hsr_arena arena = {0};
    struct peaks p = {.arena = &arena, .fw = 2};
    int rc = -1;
    if (peaks_read(&p, a, alen) == 0 && peaks_read(&p, b, blen) == 0)
        rc = peaks_write(&p, HSR_JOB_PEAK_KEPT, out);
    hsr_arena_free(&arena);
    return rc;
}

int hsr_job_peaks_chunk(struct hsr_buf *file, const uint8_t *sec, size_t len)
{
    struct hsr_arena arena = {0};
    struct peaks p = {.arena = &arena, .fw = 2};
    int rc = -1;
    if (peaks_read(&p, sec, len) == 0) {
        size_t c = hsr_chunk_begin(file, HS_JOB_PEAK_STACKS);
        rc = peaks_write(&p, HSR_JOB_PEAK_TOP, file);
        hsr_chunk_end(file, c);
    }
    hsr_arena_free(&arena);
    return rc;
}
