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
 * return address, learned from one libunwind unwind (step by step, so it is slow:
 * libunwind masks signals at each step) the first time the address shows up: the
 * caller's CFA is either the stack pointer plus a constant (code without frame
 * pointers) or rbp + 16 (a frame pointer, as with -fno-omit-frame-pointer, alloca
 * or variable-length arrays: frames that change size), and the caller's rbp is
 * either untouched or saved at a constant offset from the CFA (libunwind's save
 * location). rbp at frame 0 is the one the recorder's outermost frame saved. A
 * rule seen to change, a signal frame, or an rbp kept in another register: that
 * return address goes to libunwind alone (unw_backtrace).
 *
 * Slots are read only inside the thread's stack (its bounds from pthread): on a
 * stack of the program's own (coroutines, sigaltstack) nothing is cached.
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <pthread.h>
#include <string.h>

#include "core/pool.h"
#include "stacks/modules.h"
#include "stacks/unwind_cache.h"

#define WAYS 512u   /* call sites remembered per thread: sets of two ways */
#define RULES 8192u /* return addresses with a learned rule per thread (open addressing) */
#define TYPES 4096u /* (call site, region, size) -> stack type, per thread: direct-mapped */

/* A return address's rule: how its frame's CFA is found */
enum { CFA_SP, CFA_RBP, RULE_END, RULE_LIBUNWIND };
#define RBP_UNSAVED INT32_MIN /* the caller's rbp is the frame's own */

struct rule {
    uint64_t ret; /* 0: empty */
    uint8_t kind;
    int32_t delta;   /* CFA_SP: CFA = slot + 8 + delta */
    int32_t rbp_off; /* the caller's rbp is at CFA + rbp_off, or RBP_UNSAVED */
};

struct site {
    uint64_t a0, r0; /* key: slot and return address of frame 0; a0 == 0: empty */
    uint64_t gen;    /* this filling of the entry: its types are found under it */
    uint32_t n;      /* frames */
    struct {
        uint64_t slot, ret; /* side by side: the check reads both, frame after frame */
    } f[HSR_UNWIND_CACHE_DEPTH];
};

/* The type a call site's frames gave for one (region, size). A call site with many
 * sizes (a string or a vector growing) would thrash a few ways of its own; keyed by
 * the site's filling (gen), a stale entry can never match: gens are not reused. */
struct known {
    uint64_t gen, size;
    uint32_t region;
    struct hsr_stack_entry *type;
};

struct hsr_unwind_cache {
    uintptr_t lo, hi;         /* the thread's stack */
    uintptr_t own_lo, own_hi; /* the recorder's code */
    uint32_t rules_used;
    uint64_t next_gen; /* never reset, not even by a fork's clear */
    unsigned victim;   /* the way of a full set filled last */
    struct site sites[WAYS];
    struct rule rules[RULES];
    struct known types[TYPES];
};

struct hsr_unwind_cache *hsr_unwind_cache_new(void)
{
    struct hsr_unwind_cache *c = hsr_map(sizeof *c);
    if (!c)
        return NULL;
    pthread_attr_t attr;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            c->lo = (uintptr_t)addr;
            c->hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
    hsr_recorder_text(&c->own_lo, &c->own_hi);
    return c; /* unknown bounds (lo == hi == 0): every lookup misses, nothing is stored */
}

void hsr_unwind_cache_clear(struct hsr_unwind_cache *c)
{
    for (unsigned i = 0; i < WAYS; i++)
        c->sites[i].a0 = 0; /* the rules stay true: the same code at the same addresses */
    /* the types are gone; their entries stay keyed by gens no site will have again */
}

static int on_stack(const struct hsr_unwind_cache *c, uintptr_t a)
{
    return a >= c->lo && a + 8 <= c->hi && (a & 7) == 0;
}

static struct site *site_of(struct hsr_unwind_cache *c, uint64_t a0, uint64_t r0)
{
    uint64_t h = (a0 ^ (r0 * 0x9e3779b97f4a7c15ull)) >> 4;
    return &c->sites[(h ^ (h >> 17)) & (WAYS - 2)]; /* the first of a set of two */
}

static struct rule *rule_slot(struct hsr_unwind_cache *c, uint64_t ret)
{
    uint64_t h = ret * 0x9e3779b97f4a7c15ull;
    for (uint32_t i = (uint32_t)(h >> 40);; i++) {
        struct rule *r = &c->rules[i & (RULES - 1)];
        if (r->ret == ret || r->ret == 0)
            return r;
    }
}

static void learn(struct hsr_unwind_cache *c, uint64_t ret, struct rule rule)
{
    struct rule *r = rule_slot(c, ret);
    if (r->ret == ret) {
        if (r->kind != rule.kind || r->delta != rule.delta || r->rbp_off != rule.rbp_off)
            r->kind = RULE_LIBUNWIND; /* two answers: not a fixed rule after all */
        return;
    }
    if (c->rules_used >= RULES / 2) /* full enough: unknown addresses stay unknown */
        return;
    c->rules_used++;
    rule.ret = ret;
    *r = rule;
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

/* The rule of the frame just stepped out of: cfa its CFA, rbp its rbp, cur at its caller. */
static struct rule rule_of(unw_cursor_t *cur, uint64_t slot, uint64_t cfa, uint64_t rbp, int signal)
{
    struct rule r = {.kind = RULE_LIBUNWIND, .rbp_off = RBP_UNSAVED};
    unw_save_loc_t loc;
    if (signal || unw_get_save_loc(cur, UNW_X86_64_RBP, &loc) != 0)
        return r;
    if (loc.type == UNW_SLT_MEMORY && loc.u.addr - cfa + 4096 < 8192)
        r.rbp_off = (int32_t)(int64_t)(loc.u.addr - cfa);
    else if (loc.type != UNW_SLT_NONE)
        return r; /* rbp kept in a register: not a case worth a rule */
    if (cfa == rbp + 16 && r.rbp_off == -16) {
        r.kind = CFA_RBP;
    } else if (cfa - slot - 8 < (1u << 30)) {
        r.kind = CFA_SP;
        r.delta = (int32_t)(cfa - slot - 8);
    }
    return r;
}

/* A DWARF unwind (libunwind, step by step for the stack pointers): return
 * addresses and their slots, recorder frames removed, each frame's rule learned.
 * Returns the frame count, and whether every slot can be checked later (*cacheable). */
static __attribute__((noinline)) int unwind(struct hsr_unwind_cache *c, uint64_t *ret,
                                            uint64_t *slot, int max, int *cacheable)
{
    unw_context_t ctx;
    unw_cursor_t cur;
    *cacheable = 0;
    if (unw_getcontext(&ctx) != 0 || unw_init_local(&cur, &ctx) != 0)
        return 0;
    int n = 0, skipping = 1, ok = c->hi != 0, step, signal = 0;
    unw_word_t rbp = 0;
    while (n < max && (step = unw_step(&cur)) > 0) {
        unw_word_t ip, sp;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || unw_get_reg(&cur, UNW_REG_SP, &sp) != 0) {
            step = -1;
            break;
        }
        if (skipping && hsr_in_recorder((uintptr_t)ip))
            continue;
        skipping = 0;
        if (n > 0) /* the previous frame's rule: sp is its CFA */
            learn(c, ret[n - 1], rule_of(&cur, slot[n - 1], sp, rbp, signal));
        signal = unw_is_signal_frame(&cur) > 0;
        if (signal || !on_stack(c, (uintptr_t)sp - 8) || *(const uint64_t *)(sp - 8) != ip)
            ok = 0;
        if (unw_get_reg(&cur, UNW_X86_64_RBP, &rbp) != 0)
            ok = 0;
        ret[n] = ip;
        slot[n] = sp - 8;
        n++;
    }
    if (n > 0 && n < max) {
        struct rule end = {.kind = step == 0 ? RULE_END : RULE_LIBUNWIND, .rbp_off = RBP_UNSAVED};
        learn(c, ret[n - 1], end);
    }
    *cacheable = ok && n > 0;
    return n;
}

/* The stack by the learned rules, from frame 0. Returns the frame count; -1: a
 * return address without a rule (learn it); -2: one that needs libunwind. */
static int walk(struct hsr_unwind_cache *c, uint64_t a, uint64_t r, uint64_t rbp, uint64_t *ret,
                uint64_t *slot, int max)
{
    int n = 0;
    for (;;) {
        ret[n] = r;
        slot[n] = a;
        n++;
        const struct rule *rule = rule_slot(c, r);
        if (rule->ret != r)
            return -1;
        if (rule->kind == RULE_END || n == max)
            return n;
        if (rule->kind == RULE_LIBUNWIND)
            return -2;
        uint64_t cfa = rule->kind == CFA_RBP ? rbp + 16 : a + 8 + (uint64_t)rule->delta;
        if (cfa - 8 <= a || !on_stack(c, cfa - 8))
            return -2;
        if (rule->rbp_off != RBP_UNSAVED) {
            uint64_t at = cfa + (uint64_t)(int64_t)rule->rbp_off;
            if (!on_stack(c, at))
                return -2;
            rbp = *(const uint64_t *)at;
        }
        a = cfa - 8;
        r = *(const uint64_t *)a;
    }
}

static struct known *known_slot(struct hsr_unwind_cache *c, uint64_t gen, uint32_t region,
                                uint64_t size)
{
    uint64_t h =
        (gen * 0x9e3779b97f4a7c15ull) ^ ((size ^ ((uint64_t)region << 40)) * 0xff51afd7ed558ccdull);
    return &c->types[(h >> 40) & (TYPES - 1)];
}

static struct hsr_stack_entry *known_type(struct hsr_unwind_cache *c, const struct site *s,
                                          uint32_t region, uint64_t size)
{
    const struct known *k = known_slot(c, s->gen, region, size);
    return k->gen == s->gen && k->size == size && k->region == region ? k->type : NULL;
}

int hsr_unwind_cached(struct hsr_unwind_cache *c, const void *fp, uint64_t *out, int max,
                      uint32_t region, uint64_t size, struct hsr_stack_entry **type, void **entry)
{
    *type = NULL;
    *entry = NULL;
    uint64_t a0, r0, rbp0;
    if (max > (int)HSR_UNWIND_CACHE_DEPTH || !frame0(c, fp, &a0, &r0, &rbp0))
        return -1; /* deeper than the cache holds, or an unknown stack: unwind as before */
    /* Two ways a set: one call site at one depth reached from two callers (a helper
     * called from two places in a loop) keeps both stacks instead of thrashing. */
    struct site *set = site_of(c, a0, r0);
    for (struct site *s = set; s < set + 2; s++) {
        if (s->a0 != a0 || s->r0 != r0 || s->n > (uint32_t)max)
            continue;
        uint32_t i = 1;
        while (i < s->n && *(const volatile uint64_t *)s->f[i].slot == s->f[i].ret)
            i++;
        if (i < s->n)
            continue;
        *entry = s;
        if ((*type = known_type(c, s, region, size)))
            return (int)s->n; /* the caller needs the type, not the frames */
        for (i = 0; i < s->n; i++)
            out[i] = s->f[i].ret;
        return (int)s->n;
    }
    uint64_t slot[HSR_UNWIND_CACHE_DEPTH];
    int cacheable = 1;
    int n = walk(c, a0, r0, rbp0, out, slot, max);
    if (n == -2)
        return -1; /* through a frame without a fixed rule: libunwind's unw_backtrace */
    if (n == -1)   /* a return address seen for the first time: learn the whole stack */
        n = unwind(c, out, slot, max, &cacheable);
    if (cacheable && slot[0] == a0 && out[0] == r0) {
        struct site *s = set[0].a0 == 0 ? set : set[1].a0 == 0 ? set + 1 : set + (c->victim ^= 1);
        s->a0 = a0;
        s->r0 = r0;
        s->n = (uint32_t)n;
        s->gen = ++c->next_gen;
        for (int i = 0; i < n; i++) {
            s->f[i].slot = slot[i];
            s->f[i].ret = out[i];
        }
        *entry = s;
    }
    return n;
}

void hsr_unwind_cache_type(struct hsr_unwind_cache *c, void *entry, uint32_t region, uint64_t size,
                           struct hsr_stack_entry *type)
{
    const struct site *s = entry;
    struct known *k = known_slot(c, s->gen, region, size);
    k->gen = s->gen;
    k->size = size;
    k->region = region;
    k->type = type;
}
