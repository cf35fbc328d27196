/*
 * malloc.c — the interposed C allocation functions (malloc family).
 *
 * Each hook calls the next definition (the allocator underneath: glibc, or a peer
 * preloaded after us) with the re-entrancy guard set, then counts the call for
 * the current region. Counting semantics: profile_format.h, SIZE_COUNTS/API_COUNTS.
 * Counts-only recording (hot.c says when) takes a fast path in malloc and free:
 * the call counted first in the thread's table (count/counting.h), then the real
 * call, without the guard over glibc's own; every other case goes out of line.
 *
 * Bootstrap: the next definitions are found with dlsym(RTLD_NEXT), and dlsym
 * itself may call calloc/malloc. Those calls (made while resolving, on the
 * resolving thread) are served from a static buffer; free() ignores its blocks.
 *
 * Functions the next allocator lacks (Debian's jemalloc has no pvalloc) must not
 * fall through to glibc's version, which would allocate from glibc's heap a block
 * the peer's free() later chokes on. So memalign/valloc/pvalloc/aligned_alloc/
 * reallocarray are used only when they come from the same object as the next
 * malloc (dladdr); otherwise they are built on the next posix_memalign/realloc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "access/access.h"
#include "core/guard.h"
#include "core/lifecycle.h"
#include "count/counting.h"
#include "count/heap.h"
#include "count/regions.h"
#include "hooks/blocks.h"
#include "hooks/hooks.h"
#include "trace/trace.h"
#include "track/track.h"

struct hsr_real hsr_real;

/* ---- bootstrap buffer for dlsym's own allocations ---- */

static _Alignas(64) char boot_buf[64 * 1024];
static size_t boot_used;
static HSR_TLS int resolving;

static void *boot_alloc(size_t n)
{
    size_t need = 16 + ((n + 15) & ~(size_t)15);
    if (boot_used + need > sizeof boot_buf)
        return NULL;
    char *p = boot_buf + boot_used;
    boot_used += need;
    memcpy(p, &n, sizeof n); /* size header, for realloc */
    return p + 16;           /* static storage: already zero (calloc) */
}

static int is_boot(const void *p)
{
    return (uintptr_t)p - (uintptr_t)boot_buf < sizeof boot_buf; /* one compare */
}

static size_t boot_size(const void *p)
{
    size_t n;
    memcpy(&n, (const char *)p - 16, sizeof n);
    return n;
}

void *hsr_next(const char *name)
{
    int saved = hsr_guard;
    hsr_guard = 1;
    void *sym = dlsym(RTLD_NEXT, name);
    hsr_guard = saved;
    return sym;
}

/* The next `name`, if it comes from the same object as the next malloc. */
static void *next_same_object(const char *name)
{
    void *sym = dlsym(RTLD_NEXT, name);
    Dl_info a, b;
    if (!sym || !dladdr(sym, &a) || !dladdr((void *)hsr_real.malloc, &b))
        return NULL;
    return a.dli_fbase == b.dli_fbase ? sym : NULL;
}

void hsr_resolve(void)
{
    if (hsr_real.free)
        return;
    resolving = 1;
    struct hsr_real r;
    r.malloc = dlsym(RTLD_NEXT, "malloc");
    r.calloc = dlsym(RTLD_NEXT, "calloc");
    r.realloc = dlsym(RTLD_NEXT, "realloc");
    r.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    hsr_real.malloc = r.malloc; /* next_same_object compares with it */
    r.aligned_alloc = next_same_object("aligned_alloc");
    r.memalign = next_same_object("memalign");
    r.valloc = next_same_object("valloc");
    r.pvalloc = next_same_object("pvalloc");
    r.reallocarray = next_same_object("reallocarray");
    r.free = dlsym(RTLD_NEXT, "free");
    if (!r.malloc || !r.calloc || !r.realloc || !r.free || !r.posix_memalign) {
        static const char msg[] = "heapscope: cannot find the next malloc/free (dlsym), aborting\n";
        (void)!write(2, msg, sizeof msg - 1);
        syscall(SYS_exit_group, 127); /* not _exit: we interpose it */
    }
    void (*next_free)(void *) = r.free;
    r.free = NULL;
    hsr_real = r;
    /* free last, published: it is the "resolved" flag the hooks test */
    __atomic_store_n(&hsr_real.free, next_free, __ATOMIC_RELEASE);
    resolving = 0;
    hsr_tracking_init(); /* tracking, trace and stacks from the very first allocation on */
    hsr_trace_init();
    hsr_settings_init();
}

#define RESOLVE()                         \
    do {                                  \
        if (HSR_UNLIKELY(!hsr_real.free)) \
            hsr_resolve();                \
    } while (0)

/* Forward without counting: inside our own work, or when not recording. */
#define PASS_THROUGH() (hsr_guard || !atomic_load_explicit(&hsr_recording, memory_order_relaxed))

/* ---- fallbacks on the next posix_memalign ---- */

static void *memalign_via_posix(size_t align, size_t n)
{
    void *p = NULL;
    if (align < sizeof(void *))
        align = sizeof(void *);
    if (align & (align - 1)) {
        errno = EINVAL;
        return NULL;
    }
    int rc = hsr_real.posix_memalign(&p, align, n);
    if (rc) {
        errno = rc;
        return NULL;
    }
    return p;
}

static void *real_memalign(size_t align, size_t n)
{
    return hsr_real.memalign ? hsr_real.memalign(align, n) : memalign_via_posix(align, n);
}

static void *real_aligned_alloc(size_t align, size_t n)
{
    return hsr_real.aligned_alloc ? hsr_real.aligned_alloc(align, n) : memalign_via_posix(align, n);
}

static void *real_valloc(size_t n)
{
    return hsr_real.valloc ? hsr_real.valloc(n) : memalign_via_posix((size_t)getpagesize(), n);
}

static void *real_pvalloc(size_t n)
{
    if (hsr_real.pvalloc)
        return hsr_real.pvalloc(n);
    size_t page = (size_t)getpagesize();
    size_t rounded = n ? (n + page - 1) & ~(page - 1) : page;
    if (rounded < n) {
        errno = ENOMEM;
        return NULL;
    }
    return memalign_via_posix(page, rounded);
}

static void *real_reallocarray(void *p, size_t a, size_t b)
{
    if (hsr_real.reallocarray)
        return hsr_real.reallocarray(p, a, b);
    size_t n;
    if (__builtin_mul_overflow(a, b, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return hsr_real.realloc(p, n);
}

static uint64_t product(size_t a, size_t b)
{
    size_t n;
    return __builtin_mul_overflow(a, b, &n) ? UINT64_MAX : n;
}

/* The old block of a realloc after the real call: freed (moved, shrunk to
 * nothing, or grown in place: a new block at the same address), or, when the
 * call failed, still there as it was. */
static void realloc_done(struct hsr_dying *d, void *p, uint64_t n)
{
    if (p || n == 0)
        hsr_block_dead(d);
    else
        hsr_block_revive(d);
    /* an allocator whose realloc(p, 0) returns a minimal block: not an allocation
     * for the counts (profile_format.h), but heap it holds */
    if (p && n == 0 && !hsr_heap_measure_requested())
        hsr_heap_add(hsr_heap_usable(p), hsr_place.in.component != 0);
}

/* ---- the hooks ---- */

/* malloc and free: counts only over glibc, the fast path inline (the call counted
 * first, no guard; with the heap in use watched, the block's usable size added or
 * taken away too); out of line, its second try after a miss (the thread's counts
 * cached anew), the fast path over a peer (the guard held over its call) and the
 * general path. */

/* A fast-path malloc (counted before the call) that returned NULL; its size is in
 * hsr_tls.new_size (core/tls.h). */
static __attribute__((noinline)) void *count_failed(void)
{
    hsr_fast_undo_alloc(HS_API_MALLOC, hsr_tls.new_size);
    return NULL;
}

static __attribute__((noinline)) void *count_failed_as(unsigned api)
{
    hsr_fast_undo_alloc(api, hsr_tls.new_size);
    return NULL;
}

static __attribute__((noinline)) void *malloc_general(size_t n, int fast)
{
    if (fast != HSR_FAST_NONE && fast != HSR_FAST_FREES && hsr_fast_retry_alloc(HS_API_MALLOC, n)) {
        hsr_guard = fast == HSR_FAST_GUARDED;
        hsr_tls.new_size = n;
        void *p = hsr_real.malloc(n);
        hsr_guard = 0;
        if (HSR_UNLIKELY(!p))
            return count_failed();
        if (fast == HSR_FAST_HEAP)
            hsr_heap_fast_born(p);
        return p;
    }
    if (HSR_UNLIKELY(!hsr_real.free)) {
        if (resolving)
            return boot_alloc(n);
        hsr_resolve();
    }
    if (PASS_THROUGH())
        return hsr_real.malloc(n);
    hsr_guard = 1;
    void *p = HSR_ACCESS_ALLOC(n, 0, hsr_real.malloc(n)); /* access/access.h: a sampled block */
    struct hsr_site site = hsr_note_alloc(HS_API_MALLOC, n, p);
    HSR_ACCESS_BORN(p, n, site, HS_API_MALLOC);
    hsr_guard = 0;
    return p;
}

/* The heap fast path, out of line: BARE's keeps no register across the call. */
static __attribute__((noinline)) void *malloc_heap(size_t n)
{
    if (HSR_UNLIKELY(!hsr_fast_count_alloc(HS_API_MALLOC, n)))
        return malloc_general(n, HSR_FAST_HEAP);
    hsr_tls.new_size = n;
    void *p = hsr_real.malloc(n);
    if (HSR_UNLIKELY(!p))
        return count_failed();
    hsr_heap_fast_born(p);
    return p;
}

/* The tracking fast path, out of line (TRACK): counted in the thread's cached counts
 * (and down to the next sampled stack), glibc's malloc, then the block to tracking; a
 * call the cached counts cannot take (a sample due, a region or component call) goes
 * the general way. The guard over tracking: its rare slow paths may map memory. */
static void track_born(void *p, size_t n)
{
    hsr_guard = 1;
    hsr_track_birth(p, n, (struct hsr_site){hsr_tls.counts_region, NULL});
    hsr_guard = 0;
}

static __attribute__((noinline)) void *malloc_track(size_t n)
{
    if (HSR_UNLIKELY(!hsr_fast_retry_alloc(HS_API_MALLOC, n)))
        return malloc_general(n, HSR_FAST_NONE);
    void *p = hsr_real.malloc(n);
    if (HSR_UNLIKELY(!p)) {
        hsr_tls.new_size = n;
        return count_failed();
    }
    track_born(p, n);
    return p;
}

void *malloc(size_t n)
{
    int fast = HSR_HOT(c);
    if (HSR_LIKELY(fast == HSR_FAST_BARE) && HSR_LIKELY(hsr_fast_count_alloc(HS_API_MALLOC, n))) {
        hsr_tls.new_size = n;
        void *p = hsr_real.malloc(n);
        return HSR_LIKELY(p) ? p : count_failed();
    }
    if (HSR_FAST_COUNTS_DOWN(fast) && HSR_LIKELY(hsr_fast_sampled_alloc(HS_API_MALLOC, n))) {
        void *p = hsr_real.malloc(n); /* (BARE's test is first: it pays nothing for this) */
        return HSR_LIKELY(p) ? p : count_failed();
    }
    if (fast == HSR_FAST_HEAP)
        return malloc_heap(n);
    if (fast == HSR_FAST_TRACK)
        return malloc_track(n);
    return malloc_general(n, fast);
}

static __attribute__((noinline)) void *calloc_general(size_t a, size_t b, int fast)
{
    size_t n;
    if (fast == HSR_FAST_BARE && !__builtin_mul_overflow(a, b, &n) && hsr_fast_refill() &&
        hsr_fast_count_alloc(HS_API_CALLOC, n)) {
        hsr_tls.new_size = n;
        void *p = hsr_real.calloc(a, b);
        return HSR_LIKELY(p) ? p : count_failed_as(HS_API_CALLOC);
    }
    if (HSR_UNLIKELY(!hsr_real.free)) {
        if (resolving)
            return boot_alloc(product(a, b) == UINT64_MAX ? SIZE_MAX : a * b);
        hsr_resolve();
    }
    if (PASS_THROUGH())
        return hsr_real.calloc(a, b);
    hsr_guard = 1;
    uint64_t bytes = product(a, b); /* a pool block is fresh pages: zero */
    void *p = bytes == UINT64_MAX ? hsr_real.calloc(a, b)
                                  : HSR_ACCESS_ALLOC(bytes, 0, hsr_real.calloc(a, b));
    struct hsr_site site = hsr_note_alloc(HS_API_CALLOC, bytes, p);
    HSR_ACCESS_BORN(p, bytes, site, HS_API_CALLOC);
    hsr_guard = 0;
    return p;
}

static __attribute__((noinline)) void *calloc_track(size_t a, size_t b)
{
    size_t n;
    if (HSR_UNLIKELY(__builtin_mul_overflow(a, b, &n)) ||
        HSR_UNLIKELY(!hsr_fast_retry_alloc(HS_API_CALLOC, n)))
        return calloc_general(a, b, HSR_FAST_NONE);
    void *p = hsr_real.calloc(a, b);
    if (HSR_UNLIKELY(!p)) {
        hsr_tls.new_size = n;
        return count_failed_as(HS_API_CALLOC);
    }
    track_born(p, n);
    return p;
}

/* calloc and realloc: counts only over glibc, inline as malloc's (a size that
 * overflows, a realloc of a bootstrap block: the general way); calloc with tracking as
 * malloc's */
void *calloc(size_t a, size_t b)
{
    int fast = HSR_HOT(c);
    size_t n;
    if (HSR_LIKELY(fast == HSR_FAST_BARE) && HSR_LIKELY(!__builtin_mul_overflow(a, b, &n)) &&
        HSR_LIKELY(hsr_fast_count_alloc(HS_API_CALLOC, n))) {
        hsr_tls.new_size = n;
        void *p = hsr_real.calloc(a, b);
        return HSR_LIKELY(p) ? p : count_failed_as(HS_API_CALLOC);
    }
    if (fast == HSR_FAST_TRACK)
        return calloc_track(a, b);
    return calloc_general(a, b, fast);
}

static __attribute__((noinline)) void free_general(void *p, int fast)
{
    /* access/access.h: a pool block never reaches the allocator, whatever the state */
    if (HSR_UNLIKELY(hsr_access_on) && hsr_access_concerns(p) && hsr_access_free(p, HS_API_FREE))
        return;
    if (fast != HSR_FAST_NONE && hsr_fast_retry_call(HS_API_FREE)) {
        if (fast == HSR_FAST_HEAP)
            hsr_heap_fast_dead(p);
        hsr_guard = fast == HSR_FAST_GUARDED;
        hsr_real.free(p);
        hsr_guard = 0;
        return;
    }
    RESOLVE();
    if (PASS_THROUGH()) {
        hsr_real.free(p);
        return;
    }
    hsr_guard = 1;
    hsr_note_free(p);
    hsr_real.free(p);
    hsr_count_call(HS_API_FREE);
    hsr_guard = 0;
}

static __attribute__((noinline)) void free_heap(void *p)
{
    if (HSR_UNLIKELY(!hsr_fast_count_call(HS_API_FREE))) {
        free_general(p, HSR_FAST_HEAP);
        return;
    }
    hsr_heap_fast_dead(p);
    hsr_real.free(p); /* a tail call */
}

/* Tracking's free (TRACK): counted, the death noted (counted a few frees later,
 * track/deferred.c), then glibc's free. */
static __attribute__((noinline)) void free_track(void *p)
{
    if (HSR_UNLIKELY(!hsr_fast_retry_call(HS_API_FREE))) {
        free_general(p, HSR_FAST_NONE);
        return;
    }
    hsr_guard = 1;
    hsr_track_free(p);
    hsr_guard = 0;
    hsr_real.free(p); /* a tail call */
}

void free(void *p)
{
    if (!p || HSR_UNLIKELY(is_boot(p)))
        return;
    int fast = HSR_HOT(c);
    if (HSR_LIKELY(HSR_FAST_INLINE_FREES(fast)) && HSR_LIKELY(hsr_fast_count_call(HS_API_FREE))) {
        hsr_real.free(p); /* a tail call */
        return;
    }
    /* record --access: a block it does not concern goes as fast (access/access.h) */
    if (fast == HSR_FAST_ACCESS && !hsr_access_concerns_glibc(p) &&
        hsr_fast_count_call(HS_API_FREE)) {
        hsr_real.free(p);
        return;
    }
    if (fast == HSR_FAST_HEAP)
        free_heap(p);
    else if (fast == HSR_FAST_TRACK)
        free_track(p);
    else
        free_general(p, fast);
}

static __attribute__((noinline)) void *realloc_general(void *old, size_t n)
{
    if (HSR_UNLIKELY(old && is_boot(old))) {
        void *p = malloc(n);
        if (p) {
            size_t have = boot_size(old);
            memcpy(p, old, have < n ? have : n);
        }
        return p;
    }
    RESOLVE();
    if (PASS_THROUGH())
        return HSR_UNLIKELY(hsr_access_on) ? hsr_access_realloc(old, n, NULL, 1)
                                           : hsr_real.realloc(old, n);
    hsr_guard = 1;
    struct hsr_dying d;
    if (HSR_UNLIKELY(hsr_heap_watch) && old)
        hsr_block_dying(old, &d);
    uint64_t kept = 0; /* access/: bytes carried over, never dropped */
    void *p = HSR_UNLIKELY(hsr_access_on) ? hsr_access_realloc(old, n, &kept, 0)
                                          : hsr_real.realloc(old, n);
    if (HSR_UNLIKELY(hsr_heap_watch) && old)
        realloc_done(&d, p, n);
    if (old && n == 0) {
        hsr_count_call(HS_API_REALLOC); /* a free, not an allocation */
    } else {
        struct hsr_site site = hsr_note_alloc(HS_API_REALLOC, n, p);
        if (HSR_UNLIKELY(hsr_access_on))
            hsr_access_born(p, n, site.type, site.region, HS_API_REALLOC, kept);
    }
    hsr_guard = 0;
    return p;
}

void *realloc(void *old, size_t n)
{
    int fast = HSR_HOT(c);
    if (HSR_LIKELY(fast == HSR_FAST_BARE) && HSR_LIKELY(!is_boot(old))) {
        if (HSR_UNLIKELY(old && n == 0)) { /* a free, not an allocation */
            if (hsr_fast_count_call(HS_API_REALLOC))
                return hsr_real.realloc(old, 0);
        } else if (HSR_LIKELY(hsr_fast_count_alloc(HS_API_REALLOC, n))) {
            hsr_tls.new_size = n;
            void *p = hsr_real.realloc(old, n);
            return HSR_LIKELY(p) ? p : count_failed_as(HS_API_REALLOC);
        }
    }
    return realloc_general(old, n);
}

void *reallocarray(void *old, size_t a, size_t b)
{
    RESOLVE();
    uint64_t n = product(a, b);
    if (PASS_THROUGH())
        return HSR_UNLIKELY(hsr_access_on) && n != UINT64_MAX
                   ? hsr_access_realloc(old, (size_t)n, NULL, 1)
                   : real_reallocarray(old, a, b);
    hsr_guard = 1;
    struct hsr_dying d;
    if (HSR_UNLIKELY(hsr_heap_watch) && old)
        hsr_block_dying(old, &d);
    uint64_t kept = 0;
    void *p = HSR_UNLIKELY(hsr_access_on) && n != UINT64_MAX
                  ? hsr_access_realloc(old, (size_t)n, &kept, 0)
                  : real_reallocarray(old, a, b);
    if (HSR_UNLIKELY(hsr_heap_watch) && old)
        realloc_done(&d, p, n);
    if (old && n == 0) {
        hsr_count_call(HS_API_REALLOCARRAY);
    } else {
        struct hsr_site site = hsr_note_alloc(HS_API_REALLOCARRAY, n, p);
        if (HSR_UNLIKELY(hsr_access_on))
            hsr_access_born(p, n, site.type, site.region, HS_API_REALLOCARRAY, kept);
    }
    hsr_guard = 0;
    return p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
    RESOLVE();
    if (PASS_THROUGH())
        return hsr_real.posix_memalign(out, align, n);
    hsr_guard = 1;
    int rc = 0;
    void *q =
        HSR_UNLIKELY(hsr_access_on) && align && !(align & (align - 1)) && !(align % sizeof(void *))
            ? hsr_access_take(n, align)
            : NULL;
    if (q)
        *out = q;
    else
        rc = hsr_real.posix_memalign(out, align, n);
    struct hsr_site site = hsr_note_alloc(HS_API_POSIX_MEMALIGN, n, rc == 0 ? *out : NULL);
    HSR_ACCESS_BORN(rc == 0 ? *out : NULL, n, site, HS_API_POSIX_MEMALIGN);
    hsr_guard = 0;
    return rc;
}

/* access/: a sampled block from the pool when the alignment is a power of two */
#define ALIGNED_HOOK(name, api, call, size, align)                                                 \
    {                                                                                              \
        RESOLVE();                                                                                 \
        if (PASS_THROUGH())                                                                        \
            return call;                                                                           \
        hsr_guard = 1;                                                                             \
        void *p = (align) && ((align) & ((align)-1)) ? call : HSR_ACCESS_ALLOC(size, align, call); \
        struct hsr_site site = hsr_note_alloc(api, size, p);                                       \
        HSR_ACCESS_BORN(p, size, site, api);                                                       \
        hsr_guard = 0;                                                                             \
        return p;                                                                                  \
    }

void *aligned_alloc(size_t align, size_t n)
    ALIGNED_HOOK(aligned_alloc, HS_API_ALIGNED_ALLOC, real_aligned_alloc(align, n), n, align)

        void *memalign(size_t align, size_t n)
            ALIGNED_HOOK(memalign, HS_API_MEMALIGN, real_memalign(align, n), n, align)

                void *valloc(size_t n)
                    ALIGNED_HOOK(valloc, HS_API_VALLOC, real_valloc(n), n, (size_t)getpagesize())

                        void *pvalloc(size_t n)
                            ALIGNED_HOOK(pvalloc, HS_API_PVALLOC, real_pvalloc(n), n,
                                         (size_t)getpagesize())
