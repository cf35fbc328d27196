/*
 * unwind_cache.c — reusing a thread's last unwind of a call site (unwind_cache.h).
 *
 * Key: the first frame outside the recorder, i.e. the return address R0 into the
 * code that called malloc (or new), and the stack slot A0 holding it. Both come from
 * walking the recorder's own frames, which have frame pointers (CMakeLists.txt).
 *
 * Why a hit is the stack a new unwind would find: on x86-64 a call pushes the
 * return address at the caller's stack pointer - 8, so frame i's return address
 * R_i lies in slot A_i = CFA_{i-1} - 8. Same A0 and R0 means the same caller, at
 * the same call site, with the same stack pointer; the caller's unwind rule at R0
 * (a fixed offset from the stack pointer, as nearly all x86-64 code has) gives the
 * same CFA, hence the same slot A1, which the check finds still holding R1: the same
 * next caller at the same depth, and so on up the chain. The check is one load and
 * compare per frame, against a DWARF step each. A frame whose CFA comes from a
 * frame pointer that moved (alloca, variable-length arrays) could in principle meet
 * an old return address left in an old slot; docs/recorder.md says so.
 *
 * A call site the cache has not seen is walked with unwind rules learned per
 * return address: for a function whose CFA is its stack pointer plus a constant
 * at that return address (no frame pointer: the usual x86-64 code), the slot of
 * its caller's return address is a constant distance above its own (delta). The
 * first time a return address shows up, one libunwind unwind, step by step, learns
 * the deltas of every frame on the stack; a function that keeps its CFA in rbp (a
 * frame pointer, needed for alloca and variable-length arrays, whose frames change
 * size) is marked so, and any stack through it is unwound by libunwind alone.
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

#define WAYS 512u   /* call sites remembered per thread: direct-mapped */
#define RULES 8192u /* return addresses with a learned rule per thread (open addressing) */

/* A return address's rule: the distance from its slot to the next frame's slot, or */
#define RULE_END 0          /* the outermost frame: libunwind found no caller */
#define RULE_LIBUNWIND (-1) /* a frame pointer's CFA, a signal frame: libunwind alone */

struct rule {
    uint64_t ret; /* 0: empty */
    int64_t delta;
};

struct site {
    uint64_t a0, r0; /* key: slot and return address of frame 0; a0 == 0: empty */
    uint32_t n;      /* frames */
    uint32_t region; /* the type these frames gave last, for this region and size */
    uint64_t size;
    struct hsr_stack_entry *type;
    struct {
        uint64_t slot, ret; /* side by side: the check reads both, frame after frame */
    } f[HSR_UNWIND_CACHE_DEPTH];
};

struct hsr_unwind_cache {
    uintptr_t lo, hi; /* the thread's stack */
    uint32_t rules_used;
    struct site sites[WAYS];
    struct rule rules[RULES];
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
    return c; /* unknown bounds (lo == hi == 0): every lookup misses, nothing is stored */
}

void hsr_unwind_cache_clear(struct hsr_unwind_cache *c)
{
    for (unsigned i = 0; i < WAYS; i++)
        c->sites[i].a0 = 0; /* the rules stay true: the same code at the same addresses */
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

static void learn(struct hsr_unwind_cache *c, uint64_t ret, int64_t delta)
{
    struct rule *r = rule_slot(c, ret);
    if (r->ret == ret) {
        if (r->delta != delta) /* two distances seen: not a constant one after all */
            r->delta = RULE_LIBUNWIND;
        return;
    }
    if (c->rules_used >= RULES / 2) /* full enough: unknown addresses stay unknown */
        return;
    c->rules_used++;
    r->ret = ret;
    r->delta = delta;
}

static int on_stack(const struct hsr_unwind_cache *c, uintptr_t a)
{
    return a >= c->lo && a + 8 <= c->hi && (a & 7) == 0;
}

static struct site *site_of(struct hsr_unwind_cache *c, uint64_t a0, uint64_t r0)
{
    uint64_t h = (a0 ^ (r0 * 0x9e3779b97f4a7c15ull)) >> 4;
    return &c->sites[(h ^ (h >> 17)) & (WAYS - 1)];
}

/* The first return address outside the recorder and its slot, through the
 * recorder's frame-pointer chain. 0 if the chain leaves the stack. */
static __attribute__((noinline)) int frame0(const struct hsr_unwind_cache *c, uint64_t *a0,
                                            uint64_t *r0)
{
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    for (int i = 0; i < HSR_STACK_SKIP_MAX + 4; i++) {
        if (!on_stack(c, fp) || !on_stack(c, fp + 8))
            return 0;
        uintptr_t ret = ((uintptr_t *)fp)[1];
        if (!hsr_in_recorder(ret)) {
            *a0 = fp + 8;
            *r0 = ret;
            return 1;
        }
        uintptr_t next = ((uintptr_t *)fp)[0];
        if (next <= fp)
            return 0;
        fp = next;
    }
    return 0;
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
    int n = 0, skipping = 1, ok = c->hi != 0, step;
    unw_word_t rbp = 0, prev_sp = 0;
    int prev_signal = 0;
    while (n < max && (step = unw_step(&cur)) > 0) {
        unw_word_t ip, sp;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || unw_get_reg(&cur, UNW_REG_SP, &sp) != 0) {
            step = -1;
            break;
        }
        if (skipping && hsr_in_recorder((uintptr_t)ip))
            continue;
        skipping = 0;
        if (n > 0) /* the previous frame's rule: how far its caller's slot is */
            learn(c, ret[n - 1],
                  prev_signal || sp == rbp + 16 ? RULE_LIBUNWIND : (int64_t)(sp - prev_sp));
        prev_signal = unw_is_signal_frame(&cur) > 0;
        if (prev_signal || !on_stack(c, (uintptr_t)sp - 8) || *(const uint64_t *)(sp - 8) != ip)
            ok = 0;
        if (unw_get_reg(&cur, UNW_X86_64_RBP, &rbp) != 0)
            rbp = 0;
        prev_sp = sp;
        ret[n] = ip;
        slot[n] = sp - 8;
        n++;
    }
    if (n > 0 && n < max)
        learn(c, ret[n - 1], step == 0 ? RULE_END : RULE_LIBUNWIND);
    *cacheable = ok && n > 0;
    return n;
}

/* The stack by the learned rules, from frame 0 (a0, r0). Returns the frame count;
 * -1: a return address without a rule (learn it); -2: one that needs libunwind. */
static int walk(struct hsr_unwind_cache *c, uint64_t a0, uint64_t r0, uint64_t *ret,
                uint64_t *slot, int max)
{
    uint64_t a = a0, r = r0;
    int n = 0;
    for (;;) {
        ret[n] = r;
        slot[n] = a;
        n++;
        struct rule *rule = rule_slot(c, r);
        if (rule->ret != r)
            return -1;
        if (rule->delta == RULE_END || n == max)
            return n;
        if (rule->delta == RULE_LIBUNWIND)
            return -2;
        a += (uint64_t)rule->delta;
        if (!on_stack(c, a))
            return -2;
        r = *(const uint64_t *)a;
    }
}

int hsr_unwind_cached(struct hsr_unwind_cache *c, uint64_t *out, int max, uint32_t region,
                      uint64_t size, struct hsr_stack_entry **type, void **entry)
{
    *type = NULL;
    *entry = NULL;
    uint64_t a0, r0;
    struct site *s = NULL;
    if (max <= (int)HSR_UNWIND_CACHE_DEPTH && frame0(c, &a0, &r0)) {
        s = site_of(c, a0, r0);
        if (s->a0 == a0 && s->r0 == r0 && s->n <= (uint32_t)max) {
            uint32_t i = 1;
            while (i < s->n && *(const volatile uint64_t *)s->f[i].slot == s->f[i].ret)
                i++;
            if (i == s->n) {
                for (i = 0; i < s->n; i++)
                    out[i] = s->f[i].ret;
                if (s->type && s->region == region && s->size == size)
                    *type = s->type;
                *entry = s;
                return (int)s->n;
            }
        }
    }
    if (max > (int)HSR_UNWIND_CACHE_DEPTH)
        return -1; /* deeper than the cache holds: the caller unwinds as before */
    if (!s)
        return -1; /* no frame 0 on this thread's stack: libunwind's unw_backtrace */
    uint64_t slot[HSR_UNWIND_CACHE_DEPTH];
    int cacheable = 1;
    int n = walk(c, a0, r0, out, slot, max);
    if (n == -2)
        return -1; /* through a frame pointer's frame: libunwind's unw_backtrace */
    if (n == -1) /* a return address seen for the first time: learn the whole stack */
        n = unwind(c, out, slot, max, &cacheable);
    if (cacheable && slot[0] == a0 && out[0] == r0) {
        s->a0 = a0;
        s->r0 = r0;
        s->n = (uint32_t)n;
        s->type = NULL;
        for (int i = 0; i < n; i++) {
            s->f[i].slot = slot[i];
            s->f[i].ret = out[i];
        }
        *entry = s;
    }
    return n;
}

void hsr_unwind_cache_type(void *entry, uint32_t region, uint64_t size,
                           struct hsr_stack_entry *type)
{
    struct site *s = entry;
    s->region = region;
    s->size = size;
    s->type = type;
}
