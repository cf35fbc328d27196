/*
 * cxx.c — the interposed C++ operator new / delete, every variant
 * (plain, [], nothrow, aligned, sized), by their mangled names.
 *
 * Why not just count the malloc inside: peer allocators (tcmalloc, jemalloc,
 * mimalloc) define their own operator new that never calls malloc. Each hook calls
 * the next definition (libstdc++'s or the peer's) with the guard set, so the
 * malloc libstdc++'s operator new makes inside is not counted a second time.
 *
 * The throwing operator new may throw std::bad_alloc through this C frame: the
 * file is compiled with -fexceptions and the guard is dropped by a cleanup
 * handler, which also counts the failure.
 * If no next definition exists (libstdc++ not loaded), malloc/free stand in.
 *
 * Hot path: when the next operators are libstdc++'s (which only wrap malloc and
 * free), plain new/new[] and plain/sized delete call the next malloc/free
 * themselves; when the recorder only counts (hot.c), the call is counted first
 * and, over glibc's malloc, made without the guard. A NULL from malloc goes on to
 * the next operator new (new_handler, bad_alloc).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access/access.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "count/counting.h"
#include "count/heap.h"
#include "cxx_operators.h"
#include "hooks/blocks.h"
#include "hooks/hooks.h"

/* The next definitions, looked up on the first call of any operator (libstdc++
 * may come with a dlopen'ed library, after our constructor). NULL: none. */
static void *next_op[N_OPS];
static _Atomic int ops_ready;
/* The next operator new/delete are libstdc++'s plain wrappers of malloc/free
 * (they come from another object than the next malloc): then the plain variants
 * call malloc/free directly, one indirection less on the hot path. */
int hsr_ops_wrap_malloc;

/* A program may replace operator new(size_t) and operator delete(void*) only (FreeFem++
 * does, to count its pointers): the standard defaults of the other variants call those
 * (sized delete calls delete(ptr), new[] calls new(size), ...), and hooking them here
 * would skip the program's. Such a variant is forwarded, uncounted and unguarded, to
 * the next definition (libstdc++'s default), which calls the program's operator: the
 * malloc/free that one makes are what the recorder counts, one per new/delete. */
static unsigned char op_forward[N_OPS];

/* Those variants (cxx_operators.h) whose next definition exists; 1 if any. */
static int find_replaced(void)
{
    int any = 0, saved = hsr_guard;
    hsr_guard = 1; /* dlsym may allocate */
    cxx_ops_reaching_replaced((const void *)find_replaced, op_forward);
    hsr_guard = saved;
    for (int i = 0; i < N_OPS; i++) {
        op_forward[i] = op_forward[i] && next_op[i] != NULL;
        any |= op_forward[i];
    }
    return any;
}

static void resolve_ops(void)
{
    if (!hsr_real.free)
        hsr_resolve();
    for (int i = 0; i < N_OPS; i++)
        next_op[i] = hsr_next(cxx_op_names[i]);
    int forwards = find_replaced(); /* then no fast path: the counted ones forward */
    Dl_info new_at, delete_at, malloc_at;
    hsr_ops_wrap_malloc =
        !forwards && next_op[NEW] && next_op[DEL] && dladdr(next_op[NEW], &new_at) &&
        dladdr(next_op[DEL], &delete_at) && dladdr((void *)hsr_real.malloc, &malloc_at) &&
        new_at.dli_fbase == delete_at.dli_fbase && new_at.dli_fbase != malloc_at.dli_fbase &&
        strstr(new_at.dli_fname, "libstdc++") != NULL;
    atomic_store_explicit(&ops_ready, 1, memory_order_release);
    hsr_hot_update();
}

static void *op(int which)
{
    if (HSR_UNLIKELY(!atomic_load_explicit(&ops_ready, memory_order_acquire)))
        resolve_ops();
    return next_op[which];
}

typedef void *(*new_fn)(size_t);
typedef void *(*new_al_fn)(size_t, size_t);
typedef void (*del_fn)(void *);
typedef void (*del2_fn)(void *, size_t);
typedef void (*del3_fn)(void *, size_t, size_t);

/* Without a next operator new (no libstdc++): malloc stands in; a failed throwing
 * new cannot throw from C, so it ends the program like an uncaught bad_alloc. */
static void *fallback_new(size_t n, size_t align, int nothrow)
{
    void *p = NULL;
    if (align) {
        if (hsr_real.posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, n))
            p = NULL;
    } else {
        p = hsr_real.malloc(n ? n : 1);
    }
    if (!p && !nothrow) {
        static const char msg[] = "heapscope: operator new failed (no libstdc++ to throw)\n";
        (void)!write(2, msg, sizeof msg - 1);
        abort();
    }
    return p;
}

static void *call_new(int which, size_t n, size_t align)
{
    void *f = op(which);
    int nothrow =
        which == NEW_NT || which == NEW_ARR_NT || which == NEW_AL_NT || which == NEW_ARR_AL_NT;
    if (!f)
        return fallback_new(n, align, nothrow);
    /* The nothrow_t argument is a reference nobody reads: pass any address. */
    static const char nothrow_tag;
    if (align)
        return nothrow ? ((void *(*)(size_t, size_t, const void *))f)(n, align, &nothrow_tag)
                       : ((new_al_fn)f)(n, align);
    return nothrow ? ((void *(*)(size_t, const void *))f)(n, &nothrow_tag) : ((new_fn)f)(n);
}

struct new_scope {
    int ok;
    int fast; /* already counted by the fast path (its cached counts) */
    size_t n;
};

/* Counted when the call is over: a new that returned NULL or threw bad_alloc is a
 * failed call (in no size row, count/failed.h), met here on the way out; one the fast
 * path counted as an allocation is taken back. */
static void new_scope_leave(struct new_scope *s)
{
    if (!s->ok && s->fast)
        hsr_fast_undo_alloc(HS_API_OPERATOR_NEW, s->n);
    else if (!s->ok)
        (void)hsr_count_alloc(HS_API_OPERATOR_NEW, s->n, 1);
    hsr_guard = 0;
}

static void *counted_new(int which, size_t n, size_t align)
{
    if (HSR_UNLIKELY(!hsr_real.free))
        hsr_resolve();
    if (HSR_UNLIKELY(op(which) && op_forward[which])) /* the program's new counts itself */
        return call_new(which, n, align);
    if (hsr_guard || !atomic_load_explicit(&hsr_recording, memory_order_relaxed))
        return call_new(which, n, align);
    hsr_guard = 1;
    struct new_scope scope __attribute__((cleanup(new_scope_leave))) = {0, 0, n};
    /* access/access.h: a sampled block from the pool (aligned to a power of two) */
    void *p = align & (align - 1) ? call_new(which, n, align)
                                  : HSR_ACCESS_ALLOC(n, align, call_new(which, n, align));
    if (p) {
        scope.ok = 1;
        struct hsr_site site = hsr_count_alloc(HS_API_OPERATOR_NEW, n, 0);
        if (HSR_UNLIKELY(hsr_heap_watch))
            hsr_block_born(p, n, site);
        HSR_ACCESS_BORN(p, n, site, HS_API_OPERATOR_NEW);
    }
    return p;
}

static void counted_delete(int which, void *p, size_t size, size_t align)
{
    if (!p)
        return;
    /* access/access.h: a pool block never reaches the next operator delete (a program's
     * own delete gets it: its free does) */
    if (HSR_UNLIKELY(hsr_access_on) && !op_forward[which] && hsr_access_concerns(p) &&
        hsr_access_free(p, HS_API_OPERATOR_DELETE))
        return;
    void *f = op(which);
    int counting = !hsr_guard && atomic_load_explicit(&hsr_recording, memory_order_relaxed) &&
                   !op_forward[which]; /* the program's delete: its free is counted */
    if (counting) {
        hsr_guard = 1;
        hsr_note_free(p);
    }
    static const char nothrow_tag;
    if (!f)
        hsr_real.free(p);
    else if (which == DEL_SZ_AL || which == DEL_ARR_SZ_AL)
        ((del3_fn)f)(p, size, align);
    else if (which == DEL_SZ || which == DEL_ARR_SZ)
        ((del2_fn)f)(p, size);
    else if (which == DEL_AL || which == DEL_ARR_AL)
        ((del2_fn)f)(p, align);
    else if (which == DEL_AL_NT || which == DEL_ARR_AL_NT)
        ((void (*)(void *, size_t, const void *))f)(p, align, &nothrow_tag);
    else if (which == DEL_NT || which == DEL_ARR_NT)
        ((void (*)(void *, const void *))f)(p, &nothrow_tag);
    else
        ((del_fn)f)(p);
    if (counting) {
        hsr_count_call(HS_API_OPERATOR_DELETE);
        hsr_guard = 0;
    }
}

#define RECORDING() (!hsr_guard && atomic_load_explicit(&hsr_recording, memory_order_relaxed))

/* The fast path's malloc returned NULL, the allocation already counted: the next
 * operator new decides (new_handler, bad_alloc); a failure is counted as in
 * counted_new. */
static __attribute__((noinline)) void *new_after_null(int which)
{
    size_t n = hsr_tls.new_size;
    hsr_guard = 1;
    struct new_scope scope __attribute__((cleanup(new_scope_leave))) = {0, 1, n};
    void *p = call_new(which, n, 0);
    scope.ok = p != NULL;
    return p;
}

static __attribute__((noinline)) void *new_general(size_t n, int which, int fast)
{
    if (fast != HSR_FAST_NONE && fast != HSR_FAST_FREES &&
        hsr_fast_retry_alloc(HS_API_OPERATOR_NEW, n)) {
        hsr_guard = fast == HSR_FAST_GUARDED;
        void *p = hsr_real.malloc(n ? n : 1);
        hsr_guard = 0;
        if (HSR_LIKELY(p)) {
            if (fast == HSR_FAST_HEAP)
                hsr_heap_fast_born(p);
            return p;
        }
        hsr_tls.new_size = n;
        return new_after_null(which);
    }
    if (HSR_LIKELY(hsr_ops_wrap_malloc) && RECORDING()) {
        hsr_guard = 1;
        void *p = HSR_ACCESS_ALLOC(n, 0, hsr_real.malloc(n ? n : 1));
        if (HSR_LIKELY(p)) {
            struct hsr_site site = hsr_note_alloc(HS_API_OPERATOR_NEW, n, p);
            HSR_ACCESS_BORN(p, n, site, HS_API_OPERATOR_NEW);
            hsr_guard = 0;
            return p;
        }
        hsr_guard = 0;
    }
    return counted_new(which, n, 0);
}

/* The heap fast path, out of line: BARE's keeps no register across the call. */
static __attribute__((noinline)) void *new_heap(size_t n, int which)
{
    if (HSR_UNLIKELY(!hsr_fast_count_alloc(HS_API_OPERATOR_NEW, n)))
        return new_general(n, which, HSR_FAST_HEAP);
    hsr_tls.new_size = n;
    void *p = hsr_real.malloc(n);
    if (HSR_UNLIKELY(!p))
        return new_after_null(which);
    hsr_heap_fast_born(p);
    return p;
}

/* The tracking fast path, out of line (hooks/malloc.c's malloc_track): counted as
 * SAMPLED's, glibc's malloc, then the block to tracking; a NULL goes on to the next
 * operator new, whose block is tracked too. */
static __attribute__((noinline)) void *new_track(size_t n, int which)
{
    if (HSR_UNLIKELY(!hsr_fast_retry_alloc(HS_API_OPERATOR_NEW, n)))
        return new_general(n, which, HSR_FAST_NONE);
    void *p = hsr_real.malloc(n);
    if (HSR_UNLIKELY(!p)) {
        hsr_tls.new_size = n;
        p = new_after_null(which);
    }
    if (p) {
        hsr_guard = 1;
        hsr_track_birth(p, n, (struct hsr_site){hsr_tls.counts_region, NULL});
        hsr_guard = 0;
    }
    return p;
}

/* Counts only, libstdc++'s operators (plain wrappers of malloc and free) over
 * glibc's malloc: count, then glibc's malloc itself (malloc(0) is malloc(1)
 * there); everything else out of line. */
static inline __attribute__((always_inline)) void *fast_new(int which, size_t n)
{
    int fast = HSR_HOT(cxx);
    if (HSR_LIKELY(fast == HSR_FAST_BARE) &&
        HSR_LIKELY(hsr_fast_count_alloc(HS_API_OPERATOR_NEW, n))) {
        hsr_tls.new_size = n;
        void *p = hsr_real.malloc(n);
        return HSR_LIKELY(p) ? p : new_after_null(which);
    }
    if (HSR_FAST_COUNTS_DOWN(fast) && HSR_LIKELY(hsr_fast_sampled_alloc(HS_API_OPERATOR_NEW, n))) {
        hsr_tls.new_size = n;
        void *p = hsr_real.malloc(n);
        return HSR_LIKELY(p) ? p : new_after_null(which);
    }
    if (fast == HSR_FAST_HEAP)
        return new_heap(n, which);
    if (fast == HSR_FAST_TRACK)
        return new_track(n, which);
    return new_general(n, which, fast);
}

static __attribute__((noinline)) void delete_general(void *p, size_t n, int which, int fast)
{
    if (HSR_UNLIKELY(hsr_access_on) && p && hsr_access_concerns(p) &&
        hsr_access_free(p, HS_API_OPERATOR_DELETE)) /* access/access.h: a pool block */
        return;
    if (fast != HSR_FAST_NONE && p && hsr_fast_retry_call(HS_API_OPERATOR_DELETE)) {
        if (fast == HSR_FAST_HEAP)
            hsr_heap_fast_dead(p);
        hsr_guard = fast == HSR_FAST_GUARDED;
        hsr_real.free(p);
        hsr_guard = 0;
        return;
    }
    if (HSR_LIKELY(hsr_ops_wrap_malloc)) {
        if (!p)
            return;
        if (!RECORDING()) {
            hsr_real.free(p);
            return;
        }
        hsr_guard = 1;
        hsr_note_free(p);
        hsr_real.free(p);
        hsr_count_call(HS_API_OPERATOR_DELETE);
        hsr_guard = 0;
        return;
    }
    counted_delete(which, p, n, 0);
}

static __attribute__((noinline)) void delete_heap(void *p, size_t n, int which)
{
    if (HSR_UNLIKELY(!p) || HSR_UNLIKELY(!hsr_fast_count_call(HS_API_OPERATOR_DELETE))) {
        delete_general(p, n, which, HSR_FAST_HEAP);
        return;
    }
    hsr_heap_fast_dead(p);
    hsr_real.free(p); /* a tail call */
}

static __attribute__((noinline)) void delete_track(void *p, size_t n, int which)
{
    if (HSR_UNLIKELY(!p) || HSR_UNLIKELY(!hsr_fast_retry_call(HS_API_OPERATOR_DELETE))) {
        delete_general(p, n, which, HSR_FAST_NONE);
        return;
    }
    hsr_guard = 1;
    hsr_track_free(p);
    hsr_guard = 0;
    hsr_real.free(p); /* a tail call */
}

static inline __attribute__((always_inline)) void fast_delete(int which, void *p, size_t n)
{
    int fast = HSR_HOT(cxx);
    if (HSR_LIKELY(HSR_FAST_INLINE_FREES(fast)) && HSR_LIKELY(p) &&
        HSR_LIKELY(hsr_fast_count_call(HS_API_OPERATOR_DELETE))) {
        hsr_real.free(p); /* a tail call */
        return;
    }
    /* record --access: a block it does not concern goes as fast (access/access.h) */
    if (fast == HSR_FAST_ACCESS && p && !hsr_access_concerns_glibc(p) &&
        hsr_fast_count_call(HS_API_OPERATOR_DELETE)) {
        hsr_real.free(p);
        return;
    }
    if (fast == HSR_FAST_HEAP)
        delete_heap(p, n, which);
    else if (fast == HSR_FAST_TRACK)
        delete_track(p, n, which);
    else
        delete_general(p, n, which, fast);
}

/* The hooks, by mangled name (x86-64: size_t is unsigned long, 'm'). */
void *_Znwm(size_t n) { return fast_new(NEW, n); }
void *_Znam(size_t n) { return fast_new(NEW_ARR, n); }
void *_ZnwmRKSt9nothrow_t(size_t n, const void *t)
{
    (void)t;
    return counted_new(NEW_NT, n, 0);
}
void *_ZnamRKSt9nothrow_t(size_t n, const void *t)
{
    (void)t;
    return counted_new(NEW_ARR_NT, n, 0);
}
void *_ZnwmSt11align_val_t(size_t n, size_t al) { return counted_new(NEW_AL, n, al); }
void *_ZnamSt11align_val_t(size_t n, size_t al) { return counted_new(NEW_ARR_AL, n, al); }
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *t)
{
    (void)t;
    return counted_new(NEW_AL_NT, n, al);
}
void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *t)
{
    (void)t;
    return counted_new(NEW_ARR_AL_NT, n, al);
}

void _ZdlPv(void *p) { fast_delete(DEL, p, 0); }
void _ZdaPv(void *p) { fast_delete(DEL_ARR, p, 0); }
void _ZdlPvm(void *p, size_t n) { fast_delete(DEL_SZ, p, n); }
void _ZdaPvm(void *p, size_t n) { fast_delete(DEL_ARR_SZ, p, n); }
void _ZdlPvRKSt9nothrow_t(void *p, const void *t)
{
    (void)t;
    counted_delete(DEL_NT, p, 0, 0);
}
void _ZdaPvRKSt9nothrow_t(void *p, const void *t)
{
    (void)t;
    counted_delete(DEL_ARR_NT, p, 0, 0);
}
void _ZdlPvSt11align_val_t(void *p, size_t al) { counted_delete(DEL_AL, p, 0, al); }
void _ZdaPvSt11align_val_t(void *p, size_t al) { counted_delete(DEL_ARR_AL, p, 0, al); }
void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al) { counted_delete(DEL_SZ_AL, p, n, al); }
void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al)
{
    counted_delete(DEL_ARR_SZ_AL, p, n, al);
}
void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *t)
{
    (void)t;
    counted_delete(DEL_AL_NT, p, 0, al);
}
void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *t)
{
    (void)t;
    counted_delete(DEL_ARR_AL_NT, p, 0, al);
}
