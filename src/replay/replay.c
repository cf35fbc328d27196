/*
 * replay.c — the event trace of a profile (record --trace) replayed into what
 * tracking mode computes: per (region, size, stack id) allocations, frees,
 * temporaries, lifetime histograms, blocks live at the heap peak and at the end,
 * extra bytes; and the heap peak. The analysis' hot loop, in C because a trace
 * holds 10^7..10^9 events (python/heapscope/profile/replay_native.py drives it
 * through ctypes; profile/trace.py reads the chunks and merges the threads).
 *
 * The caller hands in one decompressed TRACE_EVENTS chunk of one thread at a time
 * with a limit: events numbered below it are replayed, the first one at or past it
 * is left for later (its number goes to cursor->next_seq), so the threads' streams
 * are merged by event number without holding more than one chunk per thread.
 * Encoding: src/format/profile_format.h (TRACE_EVENTS). The rules are those of the
 * Python replay (profile/trace.py), which stays the reference: a free of an address
 * never allocated in the trace is ignored; an address allocated twice keeps the
 * newer block.
 *
 * Blocks live at the peak, lazily: a new maximum of the bytes live marks a peak
 * pending; the first free after it is a "capture" (epoch + 1). A group's live count
 * at the last capture is its count when first changed after it (or its count at
 * the end if unchanged since), so a capture costs nothing per group.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HSRP_BINS 64
#define HSRP_EV_ALLOC 1
#define HSRP_EV_FREE 2
#define HSRP_EV_STACK 3

enum { HSRP_OK, HSRP_E_NUMBER, HSRP_E_STACK, HSRP_E_TAG, HSRP_E_MEMORY };

/* Where a thread's stream stands in its current chunk (ctypes mirrors it). */
struct hsrp_cursor {
    uint64_t pos; /* next byte of the chunk */
    uint64_t seq; /* the deltas' bases (from 0 at a chunk's start) */
    uint64_t ns;
    uint64_t addr;
    uint64_t next_seq; /* number of the event at pos; UINT64_MAX at the chunk's end */
    uint32_t thread;
    uint32_t error_at; /* byte of the event that failed */
};

struct group {
    uint64_t region, size, sid;
    uint64_t allocs, frees, temps, at_peak, live, extra;
    uint64_t time[HSRP_BINS], between[HSRP_BINS];
    uint64_t epoch; /* captures seen: at_peak is live at capture `epoch` */
};
#define GROUP_WORDS 137 /* what hsrp_groups writes per group: 9 + 2 x 64 */

/* 32 bytes: the free's lookup misses the cache, a slot per line pair at most (the
 * block's size is its group's) */
struct block {
    uint64_t addr; /* 0: empty slot */
    uint64_t born_ns, thread_seq;
    uint32_t group, thread;
};

struct hsrp {
    uint64_t max_between, max_ns;
    struct group *groups;
    uint64_t ngroups, cap_groups;
    uint32_t *gindex; /* open addressing: group + 1, 0 empty */
    uint64_t gmask;
    struct block *live;
    uint64_t lmask, lused;
    uint64_t *thread_allocs;
    uint64_t nthreads;
    uint64_t *stacks; /* sid, region, size, depth, frames... per definition */
    uint64_t nstacks, cap_stacks;
    uint64_t cur, peak, peak_ns, epoch, events;
    int pending;
};

static uint64_t mix(uint64_t a)
{
    a *= 0x9E3779B97F4A7C15ull;
    return a ^ (a >> 29);
}

/* A live block's home slot: nearby addresses in nearby slots (the program's heap order,
 * kinder to the cache than a random slot per block), each 1 MiB window shifted by a hash. */
static uint64_t addr_slot(uint64_t addr) { return (addr >> 4) + mix(addr >> 20); }

static unsigned bin_of(uint64_t v)
{
    if (!v)
        return 0;
    unsigned b = 64u - (unsigned)__builtin_clzll(v);
    return b < HSRP_BINS ? b : HSRP_BINS - 1;
}

struct hsrp *hsrp_new(uint64_t max_between, uint64_t max_ns)
{
    struct hsrp *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->max_between = max_between;
    r->max_ns = max_ns;
    r->gmask = 1023;
    r->gindex = calloc(r->gmask + 1, sizeof *r->gindex);
    r->lmask = (1u << 16) - 1;
    r->live = calloc(r->lmask + 1, sizeof *r->live);
    if (!r->gindex || !r->live) {
        free(r->gindex);
        free(r->live);
        free(r);
        return NULL;
    }
    return r;
}

void hsrp_free(struct hsrp *r)
{
    if (!r)
        return;
    free(r->groups);
    free(r->gindex);
    free(r->live);
    free(r->thread_allocs);
    free(r->stacks);
    free(r);
}

static uint64_t group_hash(uint64_t region, uint64_t size, uint64_t sid)
{
    return mix(region * 0x100000001B3ull ^ mix(size) ^ (sid << 17));
}

static int regrow_groups(struct hsrp *r)
{
    uint64_t mask = r->gmask * 2 + 1;
    uint32_t *ix = calloc(mask + 1, sizeof *ix);
    if (!ix)
        return -1;
    for (uint64_t g = 0; g < r->ngroups; g++) {
        struct group *p = &r->groups[g];
        uint64_t i = group_hash(p->region, p->size, p->sid) & mask;
        while (ix[i])
            i = (i + 1) & mask;
        ix[i] = (uint32_t)(g + 1);
    }
    free(r->gindex);
    r->gindex = ix;
    r->gmask = mask;
    return 0;
}

/* The group of (region, size, sid), made on first use; NULL when out of memory. */
static struct group *group_of(struct hsrp *r, uint64_t region, uint64_t size, uint64_t sid)
{
    uint64_t i = group_hash(region, size, sid) & r->gmask;
    for (uint32_t g; (g = r->gindex[i]); i = (i + 1) & r->gmask) {
        struct group *p = &r->groups[g - 1];
        if (p->region == region && p->size == size && p->sid == sid)
            return p;
    }
    if (r->ngroups == r->cap_groups) {
        uint64_t cap = r->cap_groups ? r->cap_groups * 2 : 256;
        struct group *n = realloc(r->groups, cap * sizeof *n);
        if (!n)
            return NULL;
        r->groups = n;
        r->cap_groups = cap;
    }
    struct group *p = &r->groups[r->ngroups];
    memset(p, 0, sizeof *p);
    p->region = region;
    p->size = size;
    p->sid = sid;
    p->epoch = r->epoch; /* it had no block live at any capture before */
    r->gindex[i] = (uint32_t)++r->ngroups;
    if (r->ngroups * 2 > r->gmask && regrow_groups(r))
        return NULL;
    return p;
}

/* Before a group's live count changes: keep its count at the last capture. */
static void touch(struct hsrp *r, struct group *g)
{
    if (g->epoch != r->epoch) {
        g->at_peak = g->live;
        g->epoch = r->epoch;
    }
}

static int grow_live(struct hsrp *r)
{
    uint64_t mask = r->lmask * 2 + 1;
    struct block *n = calloc(mask + 1, sizeof *n);
    if (!n)
        return -1;
    for (uint64_t i = 0; i <= r->lmask; i++)
        if (r->live[i].addr) {
            uint64_t j = addr_slot(r->live[i].addr) & mask;
            while (n[j].addr)
                j = (j + 1) & mask;
            n[j] = r->live[i];
        }
    free(r->live);
    r->live = n;
    r->lmask = mask;
    return 0;
}

static struct block *find_live(struct hsrp *r, uint64_t addr, uint64_t *slot)
{
    uint64_t i = addr_slot(addr) & r->lmask;
    while (r->live[i].addr) {
        if (r->live[i].addr == addr) {
            *slot = i;
            return &r->live[i];
        }
        i = (i + 1) & r->lmask;
    }
    *slot = i;
    return NULL;
}

/* Take slot i out, moving later members of its probe run into the hole. */
static void remove_slot(struct hsrp *r, uint64_t i)
{
    uint64_t m = r->lmask;
    for (uint64_t j = (i + 1) & m; r->live[j].addr; j = (j + 1) & m) {
        uint64_t home = addr_slot(r->live[j].addr) & m;
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            r->live[i] = r->live[j];
            i = j;
        }
    }
    r->live[i].addr = 0;
    r->lused--;
}

static int thread_slot(struct hsrp *r, uint32_t thread)
{
    if (thread < r->nthreads)
        return 0;
    uint64_t n = (uint64_t)thread + 64;
    uint64_t *t = realloc(r->thread_allocs, n * sizeof *t);
    if (!t)
        return -1;
    memset(t + r->nthreads, 0, (n - r->nthreads) * sizeof *t);
    r->thread_allocs = t;
    r->nthreads = n;
    return 0;
}

static int on_alloc(struct hsrp *r, uint32_t thread, uint64_t ns, uint64_t addr, uint64_t size,
                    uint64_t sid, uint64_t region, uint64_t extra)
{
    if (thread_slot(r, thread))
        return HSRP_E_MEMORY;
    uint64_t n = ++r->thread_allocs[thread];
    struct group *g = group_of(r, region, size, sid);
    if (!g)
        return HSRP_E_MEMORY;
    touch(r, g);
    g->allocs++;
    g->live++;
    g->extra += extra;
    uint64_t slot;
    struct block *old = find_live(r, addr, &slot);
    if (old) { /* an address handed out twice: keep the newer block */
        struct group *og = &r->groups[old->group];
        touch(r, og);
        og->live--;
        r->cur -= og->size;
    } else {
        if ((r->lused + 1) * 4 > (r->lmask + 1) * 3) { /* 3/4 full: linear probing copes */
            if (grow_live(r))
                return HSRP_E_MEMORY;
            find_live(r, addr, &slot);
        }
        r->lused++;
    }
    struct block *b = &r->live[slot];
    b->addr = addr;
    b->born_ns = ns;
    b->thread_seq = n;
    b->group = (uint32_t)(g - r->groups);
    b->thread = thread;
    r->cur += size;
    if (r->cur > r->peak) {
        r->peak = r->cur;
        r->peak_ns = ns;
        r->pending = 1;
    }
    return HSRP_OK;
}

static void on_free(struct hsrp *r, uint64_t ns, uint64_t addr)
{
    uint64_t slot;
    struct block *b = find_live(r, addr, &slot);
    if (!b)
        return; /* allocated before the trace began */
    if (r->pending) {
        r->epoch++;
        r->pending = 0;
    }
    struct group *g = &r->groups[b->group];
    touch(r, g);
    uint64_t lifetime = ns > b->born_ns ? ns - b->born_ns : 0;
    uint64_t made = b->thread < r->nthreads ? r->thread_allocs[b->thread] : b->thread_seq;
    uint64_t between = made > b->thread_seq ? made - b->thread_seq : 0;
    g->frees++;
    g->live--;
    g->time[bin_of(lifetime)]++;
    g->between[bin_of(between)]++;
    if (between <= r->max_between && (!r->max_ns || lifetime <= r->max_ns))
        g->temps++;
    r->cur -= g->size;
    remove_slot(r, slot);
}

static int varint(const uint8_t *buf, uint64_t n, uint64_t *pos, uint64_t *out)
{
    uint64_t value = 0, p = *pos;
    for (unsigned shift = 0;; shift += 7) {
        if (p >= n)
            return HSRP_E_NUMBER;
        uint8_t b = buf[p++];
        if (shift < 64)
            value |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80)
            break;
    }
    *pos = p;
    *out = value;
    return HSRP_OK;
}

static int on_stack(struct hsrp *r, const uint8_t *buf, uint64_t n, uint64_t *pos)
{
    uint64_t f[4]; /* id, region, size, depth */
    for (int i = 0; i < 4; i++)
        if (varint(buf, n, pos, &f[i]))
            return HSRP_E_NUMBER;
    if (f[3] > (n - *pos) / 8)
        return HSRP_E_STACK;
    uint64_t need = r->nstacks + 4 + f[3];
    if (need > r->cap_stacks) {
        uint64_t cap = r->cap_stacks ? r->cap_stacks : 4096;
        while (cap < need)
            cap *= 2;
        uint64_t *s = realloc(r->stacks, cap * sizeof *s);
        if (!s)
            return HSRP_E_MEMORY;
        r->stacks = s;
        r->cap_stacks = cap;
    }
    memcpy(r->stacks + r->nstacks, f, sizeof f);
    memcpy(r->stacks + r->nstacks + 4, buf + *pos, f[3] * 8); /* little-endian, as we are */
    r->nstacks = need;
    *pos += f[3] * 8;
    return HSRP_OK;
}

/* Replay buf[c->pos..n), one chunk's events, up to the first numbered >= limit. */
int hsrp_feed(struct hsrp *r, struct hsrp_cursor *c, const uint8_t *buf, uint64_t n, uint64_t limit)
{
    uint64_t pos = c->pos;
    int err = HSRP_OK;
    while (pos < n) {
        uint64_t p = pos, head, f[6];
        if ((err = varint(buf, n, &p, &head)))
            break;
        unsigned kind = (unsigned)(head & 3);
        if (kind == HSRP_EV_STACK) {
            if ((err = on_stack(r, buf, n, &p)))
                break;
            pos = p;
            continue;
        }
        if (kind != HSRP_EV_ALLOC && kind != HSRP_EV_FREE) {
            err = HSRP_E_TAG;
            break;
        }
        uint64_t seq = c->seq + (head >> 2);
        if (seq >= limit) {
            c->pos = pos;
            c->next_seq = seq;
            return HSRP_OK;
        }
        int fields = kind == HSRP_EV_ALLOC ? 6 : 2;
        for (int i = 0; i < fields && !err; i++)
            err = varint(buf, n, &p, &f[i]);
        if (err)
            break;
        c->seq = seq;
        c->ns += f[0];
        c->addr += (f[1] >> 1) ^ (0 - (f[1] & 1));
        r->events++;
        if (kind == HSRP_EV_ALLOC) {
            if ((err = on_alloc(r, c->thread, c->ns, c->addr, f[2], f[3], f[4], f[5])))
                break;
        } else {
            on_free(r, c->ns, c->addr);
        }
        pos = p;
    }
    c->pos = pos;
    if (err) {
        c->error_at = (uint32_t)pos;
        return err;
    }
    c->next_seq = UINT64_MAX;
    return HSRP_OK;
}

/* The end: a peak still pending is captured; the global figures into
 * out[0..4) = peak bytes, its time (ns), bytes live at the end, events. */
void hsrp_finish(struct hsrp *r, uint64_t *out)
{
    if (r->pending) {
        r->epoch++;
        r->pending = 0;
    }
    for (uint64_t g = 0; g < r->ngroups; g++)
        touch(r, &r->groups[g]);
    out[0] = r->peak;
    out[1] = r->peak_ns;
    out[2] = r->cur;
    out[3] = r->events;
}

uint64_t hsrp_group_count(const struct hsrp *r) { return r->ngroups; }

/* GROUP_WORDS per group: region, size, sid, allocs, frees, temporaries, live at
 * the peak, live at the end, extra bytes, 64 lifetime bins (ns), 64 bins (allocations
 * in between). After hsrp_finish. */
void hsrp_groups(const struct hsrp *r, uint64_t *out)
{
    for (uint64_t i = 0; i < r->ngroups; i++, out += GROUP_WORDS) {
        const struct group *g = &r->groups[i];
        uint64_t head[9] = {g->region, g->size,    g->sid,  g->allocs, g->frees,
                            g->temps,  g->at_peak, g->live, g->extra};
        memcpy(out, head, sizeof head);
        memcpy(out + 9, g->time, sizeof g->time);
        memcpy(out + 9 + HSRP_BINS, g->between, sizeof g->between);
    }
}

uint64_t hsrp_stack_words(const struct hsrp *r) { return r->nstacks; }

void hsrp_stacks(const struct hsrp *r, uint64_t *out)
{
    memcpy(out, r->stacks, r->nstacks * sizeof *out);
}
