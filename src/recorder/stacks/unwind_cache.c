/*
 * unwind_cache.c — exact stacks without a DWARF unwind per allocation (unwind_cache.h).
 *
 * Two caches per thread, both checked against the stack itself:
 *
 * Call sites. Key: the first frame outside the recorder, i.e. the return address
 * R0 into the code that called malloc (or new), and the stack slot A0 holding it;
 * both come from walking the recorder's own frames, which have frame pointers
 * (CMakeLists.txt). Value: the frames found last time and the slot each return
 * address was read from. On x86-64 a call pushes the return address at the
 * caller's stack pointer - 8, so frame i's return address R_i lies in slot
 * A_i = CFA_{i-1} - 8. Same A0 and R0: the same caller, at the same call site, with
 * the same stack pointer; the slots above are checked to still hold R1, R2 ...,
 * one load and compare a frame against a DWARF step each.
 *
 * Unwind rules. A call site seen for the first time is walked with a rule per
 * return address, read from the DWARF CFI of its object the first time the
 * address shows up (cfi.c: no system call, no lock): the caller's CFA is the stack
 * pointer or rbp plus a constant, and the caller's rbp is either untouched or saved
 * at a constant offset from the CFA. A return address without such a rule (a
 * signal frame, no CFI, an expression): that stack goes to libunwind alone
 * (unw_backtrace). Rules sit in a set-associative table: a program with more
 * return addresses than it holds evicts and reads them again, boundedly.
 *
 * Stepping aside. A thread whose stacks mostly go to libunwind anyway (more than
 * three in four of a window of 256) pays for a walk that is thrown away: the cache
 * stands aside for 4,096 stacks, then tries again; each failed try doubles the
 * pause (at most 2^20 stacks).
 *
 * Slots are read only inside the thread's stack (its bounds from pthread): on a
 * stack of the program's own (coroutines, sigaltstack) nothing is cached.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>

#include "core/pool.h"
#include "stacks/cfi.h"
#include "stacks/modules.h"
#include "stacks/unwind_cache.h"

#define SITES_MIN 512u  /* call sites remembered per thread at first: sets of two ways */
#define SITES_MAX 4096u /* ... and at most, the table doubling while sets thrash */
#define RULE_SETS 4096u /* return addresses with a rule per thread: sets of RULE_WAYS */
#define RULE_WAYS 4u
#define SEEN_BITS 65536u /* the filter of call sites seen before (cleared half full) */
#define TYPES 4096u      /* (call site, region, size) -> stack type, per thread: pairs of ways */
#define WINDOW 256u      /* stacks judged together for stepping aside */
#define ASIDE_MIN 4096u
#define ASIDE_MAX (1u << 20)

struct rule {
    uint64_t ret; /* 0: empty */
    int32_t cfa_off;
    int16_t rbp_off;
    uint8_t kind; /* HSR_CFI_* */
};

struct site {
    uint64_t a0, r0;   /* key: slot and return address of frame 0; a0 == 0: empty */
    uint64_t gen;      /* this filling of the entry: its types are found under it */
    uint32_t n;        /* frames */
    uint32_t complete; /* the stack ended there (not cut at the depth asked) */
    struct site_frame {
        uint64_t slot, ret;          /* side by side: the check reads both, frame after frame */
    } f[HSR_UNWIND_CACHE_DEPTH + 1]; /* f[n]: a sentinel that never matches (the check's end) */
};

/* The sentinel's slot: a word that never holds the sentinel's return address (1). */
static const uint64_t never_one = 0;

/* The type a call site's frames gave for one (region, size). A call site with many
 * sizes (a string or a vector growing) would thrash a few ways of its own; checked
 * against the site's filling (gen), a stale entry can never match: gens are not
 * reused. */
struct known {
    uint64_t gen, size;
    uint32_t region;
    struct hsr_stack_entry *type;
};

/* dlclose bumps it: the rules of unloaded code must not serve code loaded there later */
static _Atomic uint32_t code_gen;

/* Its address tells one live thread from another (a TLS block is reused only with
 * the thread's stack: glibc caches both together). */
static HSR_TLS char owner_mark;

struct hsr_unwind_cache {
    const char *owner;        /* &owner_mark of the thread whose stack lo, hi are */
    uintptr_t lo, hi;         /* the thread's stack */
    uintptr_t own_lo, own_hi; /* the recorder's code */
    uint64_t next_gen;        /* never reset, not even by a fork's clear */
    unsigned victim;          /* the way of a full set filled last */
    unsigned rule_victim;
    uint32_t code_gen; /* code_gen when the rules were read */
    uint32_t window_left, window_fallbacks, window_conflicts, aside_left, aside_len;
    uint32_t sites_used;           /* sites in use: SITES_MIN, doubled up to SITES_MAX */
    const struct site *last;       /* the call site met last: the stack a walk may join */
    uint32_t seen_count;           /* bits set in seen */
    uint64_t seen[SEEN_BITS / 64]; /* call sites stored since it was last cleared, by hash */
    struct hsr_unwind_stats stats;
    struct site sites[SITES_MAX]; /* [0, sites_used) in use; pages touched as used */
    struct rule rules[RULE_SETS * RULE_WAYS];
    _Alignas(64) struct known types[TYPES]; /* pairs share a cache line */
};

/* The calling thread's stack, as its owner's; the state of another thread's stack
 * (the cache hangs off a thread record, which a new thread adopts when one ends)
 * forgotten. */
static void forget_sites(struct hsr_unwind_cache *c);
static void adopt(struct hsr_unwind_cache *c)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    c->lo = c->hi = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            c->lo = (uintptr_t)addr;
            c->hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
    c->owner = &owner_mark;
    forget_sites(c);
    c->window_fallbacks = c->window_conflicts = c->aside_left = 0;
    c->window_left = WINDOW;
    c->aside_len = ASIDE_MIN;
}

struct hsr_unwind_cache *hsr_unwind_cache_new(void)
{
    struct hsr_unwind_cache *c = hsr_map(sizeof *c);
    if (!c)
        return NULL;
    hsr_recorder_text(&c->own_lo, &c->own_hi);
    c->sites_used = SITES_MIN;
    c->code_gen = atomic_load_explicit(&code_gen, memory_order_relaxed);
    adopt(c);
    return c; /* unknown bounds (lo == hi == 0): every lookup misses, nothing is stored */
}

static void forget_sites(struct hsr_unwind_cache *c)
{
    for (unsigned i = 0; i < c->sites_used; i++)
        c->sites[i].a0 = 0;
    c->last = NULL;
    /* their types stay keyed by gens no site will have again */
}

void hsr_unwind_cache_clear(struct hsr_unwind_cache *c)
{
    forget_sites(c); /* the rules stay true: the same code at the same addresses */
    memset(&c->stats, 0, sizeof c->stats);
    c->window_fallbacks = c->window_conflicts = c->aside_left = 0;
    c->window_left = WINDOW;
    c->aside_len = ASIDE_MIN;
}

void hsr_unwind_code_changed(void) { atomic_fetch_add(&code_gen, 1); }

void hsr_unwind_cache_stats(const struct hsr_unwind_cache *c, struct hsr_unwind_stats *sum)
{
    const uint64_t *from = (const uint64_t *)&c->stats;
    uint64_t *to = (uint64_t *)sum;
    for (size_t i = 0; i < sizeof c->stats / sizeof *from; i++)
        to[i] += from[i];
}

static int on_stack(const struct hsr_unwind_cache *c, uintptr_t a)
{
    return a >= c->lo && a + 8 <= c->hi && (a & 7) == 0;
}

static uint64_t site_hash(uint64_t a0, uint64_t r0)
{
    return (a0 ^ (r0 * 0x9e3779b97f4a7c15ull)) * 0xc2b2ae3d27d4eb4full;
}

static struct site *site_of(struct hsr_unwind_cache *c, uint64_t h)
{
    return &c->sites[(h >> 32) & (c->sites_used - 2)]; /* the first of a set of two */
}

/* A call site missing from the table: one stored before (its bit in the filter set)
 * counts for growing the table. */
static void missed(struct hsr_unwind_cache *c, uint64_t h)
{
    uint32_t bit = (uint32_t)(h >> 48);
    uint64_t *word = &c->seen[bit / 64], mask = 1ull << (bit % 64);
    if (*word & mask) {
        c->window_conflicts++;
        return;
    }
    *word |= mask;
    if (++c->seen_count > SEEN_BITS / 2) { /* too full to tell: start again */
        memset(c->seen, 0, sizeof c->seen);
        c->seen_count = 0;
    }
}

/* The rule of a return address: from the table, else read from the CFI and kept
 * (in an empty way of its set, else in place of one). */
static const struct rule *rule_for(struct hsr_unwind_cache *c, uint64_t ret)
{
    struct rule *set = &c->rules[((ret * 0x9e3779b97f4a7c15ull) >> 52) % RULE_SETS * RULE_WAYS];
    struct rule *r = NULL;
    for (unsigned w = 0; w < RULE_WAYS; w++) {
        if (set[w].ret == ret)
            return &set[w];
        if (!r && set[w].ret == 0)
            r = &set[w];
    }
    if (!r)
        r = &set[c->rule_victim++ % RULE_WAYS];
    struct hsr_cfi_rule cfi = hsr_cfi_rule((uintptr_t)ret);
    c->stats.rules_read++;
    c->stats.rules_none += cfi.kind == HSR_CFI_NONE || cfi.kind == HSR_CFI_NOFDE;
    r->ret = ret;
    r->kind = cfi.kind;
    r->cfa_off = cfi.cfa_off;
    r->rbp_off = cfi.rbp_off;
    return r;
}

/* The first return address outside the recorder, its slot and the caller's rbp,
 * through the recorder's frame-pointer chain from fp, a recorder frame (our own
 * frames: no bounds to check until the last). 0 if the chain looks broken. */
static inline int frame0(const struct hsr_unwind_cache *c, const uintptr_t *fp, uint64_t *a0,
                         uint64_t *r0, uint64_t *rbp0)
{
    uintptr_t span = c->own_hi - c->own_lo;
    for (int i = 0; i < HSR_STACK_SKIP_MAX + 4; i++) {
        uintptr_t ret = fp[1];
        if (ret - c->own_lo >= span) {
            if (!on_stack(c, (uintptr_t)(fp + 1)))
                return 0;
            *a0 = (uintptr_t)(fp + 1);
            *r0 = ret;
            *rbp0 = fp[0]; /* pushed by the recorder's outermost frame */
            return 1;
        }
        const uintptr_t *next = (const uintptr_t *)fp[0];
        if (next <= fp)
            return 0;
        fp = next;
    }
    return 0;
}

/* Joining a known stack: frame k of join lies in slot a and holds r, the frame the
 * walk reached; if join's slots above still hold their return addresses, the rest
 * of the stack is join's (what the call-site check trusts, below). The frame count
 * with join's frames from k on after the n found, or 0. */
static int joined(const struct site *join, uint32_t k, uint64_t *ret, uint64_t *slot, int n,
                  int max, int *complete)
{
    for (uint32_t i = k + 1; i < join->n; i++)
        if (*(const volatile uint64_t *)join->f[i].slot != join->f[i].ret)
            return 0;
    uint32_t rest = join->n - k;
    *complete = join->complete && n + (int)rest <= max;
    if (n + (int)rest > max)
        rest = (uint32_t)(max - n);
    else if (!join->complete)
        return 0; /* join was cut at the depth: the stack goes on beyond what it knows */
    for (uint32_t i = 0; i < rest; i++) {
        ret[n + (int)i] = join->f[k + i].ret;
        slot[n + (int)i] = join->f[k + i].slot;
    }
    return n + (int)rest;
}

/* The stack by the rules, from frame 0 (return address r in slot a, rbp the
 * caller's): the frames and their slots, and whether it ended (*complete) rather
 * than being cut at max. Returns the frame count, or -1 at a frame without a fixed
 * rule, or one whose CFA leaves the stack (libunwind's then). Ends where libunwind's
 * unw_backtrace ends: a frame whose rule says it is the outermost, or a return
 * address below 0x4000. On the way up, a frame of join (a stack met before, or
 * NULL) in the same slot with the same return address ends the walk: the rest is
 * join's, if its slots above still hold their return addresses. */
static int walk(struct hsr_unwind_cache *c, uint64_t a, uint64_t r, uint64_t rbp, uint64_t *ret,
                uint64_t *slot, int max, const struct site *join, int *complete)
{
    int n = 0, tries = 0;
    uint32_t k = 0;
    *complete = 1;
    for (;;) {
        if (join) { /* slots rise frame after frame, in both stacks */
            while (k < join->n && join->f[k].slot < a)
                k++;
            if (k == join->n || join->f[k].slot > a) {
            } else if (join->f[k].ret == r) {
                int m = joined(join, k, ret, slot, n, max, complete);
                if (m > 0) {
                    c->stats.joined++;
                    return m;
                }
                if (++tries == 3) /* the stacks differ above: a few tries, boundedly */
                    join = NULL;
            }
        }
        ret[n] = r;
        slot[n] = a;
        if (++n == max) {
            *complete = 0;
            return n;
        }
        const struct rule *rule = rule_for(c, r);
        if (rule->kind == HSR_CFI_END)
            return n;
        if (rule->kind == HSR_CFI_NOFDE && rbp == 0)
            return n; /* no CFI and rbp 0: libunwind's end of the call chain (ld.so's start) */
        if (rule->kind != HSR_CFI_SP && rule->kind != HSR_CFI_RBP)
            return -1;
        uint64_t cfa = (rule->kind == HSR_CFI_RBP ? rbp : a + 8) + (uint64_t)(int64_t)rule->cfa_off;
        if (cfa - 8 <= a || !on_stack(c, cfa - 8))
            return -1;
        if (rule->rbp_off != HSR_CFI_RBP_SAME) {
            uint64_t at = cfa + (uint64_t)(int64_t)rule->rbp_off;
            if (!on_stack(c, at))
                return -1;
            rbp = *(const uint64_t *)at;
        }
        a = cfa - 8;
        r = *(const uint64_t *)a;
        if (r < 0x4000)
            return n;
    }
}

/* The end of a window of stacks: stand aside if most went to libunwind, and double
 * the call sites if more than one stack in 16 was of a call site seen before but no
 * longer in the table (call sites seen once, as at start-up, cost no growth; the
 * sites are forgotten: their places change). */
static void judge(struct hsr_unwind_cache *c)
{
    if (c->window_conflicts * 16 > WINDOW && c->sites_used < SITES_MAX) {
        forget_sites(c);
        c->sites_used *= 2;
        c->stats.site_growths++;
    }
    if (c->window_fallbacks * 4 > WINDOW * 3) {
        c->aside_left = c->aside_len;
        c->aside_len = c->aside_len < ASIDE_MAX ? c->aside_len * 2 : ASIDE_MAX;
        c->stats.steps_aside++;
    } else {
        c->aside_len = ASIDE_MIN;
    }
    c->window_fallbacks = c->window_conflicts = 0;
    c->window_left = WINDOW;
}

/* One stack more in the window (fell_back: it went to libunwind). */
static inline void count(struct hsr_unwind_cache *c, int fell_back)
{
    c->window_fallbacks += (uint32_t)fell_back;
    if (HSR_UNLIKELY(--c->window_left == 0))
        judge(c);
}

/* The pair of entries (one a way of the site's set; one cache line) where the types
 * of call site (a0, r0) for (region, size) are kept: known before the site is
 * checked, so it is fetched while the check runs. */
static struct known *known_pair(struct hsr_unwind_cache *c, uint64_t a0, uint64_t r0,
                                uint32_t region, uint64_t size)
{
    uint64_t h = ((a0 ^ (r0 * 0x9e3779b97f4a7c15ull)) * 0xc2b2ae3d27d4eb4full) ^
                 ((size ^ ((uint64_t)region << 40)) * 0xff51afd7ed558ccdull);
    return &c->types[(h >> 40) & (TYPES - 2)];
}

static struct known *known_slot(struct hsr_unwind_cache *c, const struct site *s, uint32_t region,
                                uint64_t size)
{
    return known_pair(c, s->a0, s->r0, region, size) + ((s - c->sites) & 1);
}

int hsr_unwind_cached(struct hsr_unwind_cache *c, const void *fp, uint64_t *out, int max,
                      uint32_t region, uint64_t size, struct hsr_stack_entry **type, void **entry)
{
    *type = NULL;
    *entry = NULL;
    if (HSR_UNLIKELY(c->owner != &owner_mark))
        adopt(c); /* a new thread took over the record: its own stack */
    c->stats.stacks++;
    if (HSR_UNLIKELY(c->aside_left)) {
        c->aside_left--;
        c->stats.aside++;
        return -1;
    }
    uint32_t gen = atomic_load_explicit(&code_gen, memory_order_relaxed);
    if (HSR_UNLIKELY(gen != c->code_gen)) { /* a library was unloaded: read the rules again */
        memset(c->rules, 0, sizeof c->rules);
        forget_sites(c);
        c->code_gen = gen;
    }
    uint64_t a0, r0, rbp0;
    if (!frame0(c, fp, &a0, &r0, &rbp0)) {
        c->stats.libunwind++;
        count(c, 1);
        return -1; /* an unknown stack: libunwind */
    }
    /* Two ways a set: one call site at one depth reached from two callers (a helper
     * called from two places in a loop) keeps both stacks instead of thrashing. */
    uint64_t h = site_hash(a0, r0);
    struct site *set = site_of(c, h);
    const struct known *pair = known_pair(c, a0, r0, region, size);
    __builtin_prefetch(pair); /* fetched while the slots are checked */
    const struct site *join = c->last;
    int key_found = 0;
    for (struct site *s = set; s < set + 2; s++) {
        if (s->a0 != a0 || s->r0 != r0 || s->n > (uint32_t)max)
            continue;
        key_found = 1;
        const struct site_frame *f = s->f + 1; /* f[n] is the sentinel: no bound to test */
        while (*(const volatile uint64_t *)f->slot == f->ret)
            f++;
        if (f < s->f + s->n) {
            join = s; /* the same call site by another path: the paths may meet again */
            continue;
        }
        c->stats.from_sites++;
        *entry = s;
        c->last = s;
        const struct known *k = pair + (s - set);
        int n = (int)s->n;
        if (k->gen == s->gen && k->size == size && k->region == region)
            *type = k->type; /* the caller needs the type, not the frames */
        else
            for (int i = 0; i < n; i++)
                out[i] = s->f[i].ret;
        count(c, 0); /* last: judging may grow the table and forget every site */
        return n;
    }
    uint64_t slot[HSR_MAX_DEPTH];
    int complete;
    int n = walk(c, a0, r0, rbp0, out, slot, max, join, &complete);
    if (n < 0) {
        c->stats.libunwind++;
        count(c, 1);
        return -1; /* through a frame without a fixed rule: libunwind's unw_backtrace */
    }
    c->stats.walked++;
    if (!key_found)
        missed(c, h);
    if (n <= (int)HSR_UNWIND_CACHE_DEPTH && c->hi) {
        struct site *s = set[0].a0 == 0 ? set : set[1].a0 == 0 ? set + 1 : set + (c->victim ^= 1);
        s->a0 = a0;
        s->r0 = r0;
        s->n = (uint32_t)n;
        s->complete = (uint32_t)complete;
        s->gen = ++c->next_gen;
        for (int i = 0; i < n; i++) {
            s->f[i].slot = slot[i];
            s->f[i].ret = out[i];
        }
        s->f[n].slot = (uintptr_t)&never_one;
        s->f[n].ret = 1;
        *entry = s;
        c->last = s;
    }
    count(c, 0); /* after the store: judging may grow the table and forget every site */
    return n;
}

void hsr_unwind_cache_type(struct hsr_unwind_cache *c, void *entry, uint32_t region, uint64_t size,
                           struct hsr_stack_entry *type)
{
    const struct site *s = entry;
    struct known *k = known_slot(c, s, region, size);
    k->gen = s->gen;
    k->size = size;
    k->region = region;
    k->type = type;
}
