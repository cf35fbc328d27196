// operator new's fast path for a call site of lane 1 and up (src/allocator/cxx.c): its
// slot keeps the size the site last asked for and that size's class, so a site whose
// size changes, and a default chain switched on and off, must still get the right
// blocks. In a fresh thread (a fresh heap):
//   site A   (make_a: 24 bytes) is the thread's first new: lane 0 of the 24-byte class
//   site B   (make_b: ::operator new(n)) first asks for 24 bytes: lane 1 of that class;
//            then it asks for ROUNDS x the sizes 17..128 in turn, each block written
//            over its whole size and deleted with the sized delete at once
//   then a default chain over a buffer: B's next new(24) must come from it; the
//            default off again: B's new(24) back in its lane
// Then N more of A, each deleted at once, and one kept: "lane0 USABLE counted ..." (its
// usable size), then N of site C (new of 32 bytes, lane 0 of its class): "hot32 K", K of
// them served by the hot class of 32 bytes (HSMALLOC_HOT_SIZES=32: all, as malloc's).
// Prints "usable BAD" (blocks whose malloc_usable_size is not the class size of the
// request: 8-byte steps where new packs, 16 otherwise), "apart SHARED" (B's 24-byte
// blocks in a 64 KiB slice holding one of A's), the heap's counted allocs, requested
// bytes and frees over the loop of B, and "chain IN OUT" (B's block inside the
// chain's buffer while it is the default, then after).
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <new>
#include <set>
#include <vector>

#include "hsmalloc.h"

#pragma weak hsmalloc_chain_create
#pragma weak hsmalloc_chain_set_default
#pragma weak hsmalloc_chain_destroy
#pragma weak hsmalloc_heap_stats_self
#pragma weak hsmalloc_stats_get

enum { N = 3000, ROUNDS = 50 };

struct Obj {
    void *a, *b;
    int c;
};

__attribute__((noinline)) static Obj *make_a() { return new Obj{nullptr, nullptr, 1}; }
__attribute__((noinline)) static void *make_b(size_t n) { return ::operator new(n); }
struct Obj32 {
    void *a, *b, *c, *d;
};
__attribute__((noinline)) static Obj32 *make_c() { return new Obj32{}; }  // lane 0 of 32

// allocations served by the hot class of block size 32 so far (0: none)
static uint64_t hot32() {
    static hsmalloc_stats_t st;
    hsmalloc_stats_get(&st);
    for (uint64_t i = 0; i < st.hot_classes; i++)
        if (st.hot[i].size == 32) return st.hot[i].allocs;
    return 0;
}

static size_t want(size_t n, int packed) { return packed ? (n + 7) / 8 * 8 : (n + 15) / 16 * 16; }

static void *worker(void *arg) {
    const int packed = *(int *)arg;
    std::vector<Obj *> as;
    std::vector<void *> bs;
    for (int i = 0; i < N; i++) {  // A first: the thread's first new
        as.push_back(make_a());
        bs.push_back(make_b(24));
    }
    size_t bad = 0;
    hsmalloc_heap_stats_t before, after;
    hsmalloc_heap_stats_self(&before);
    for (int r = 0; r < ROUNDS; r++)
        for (size_t n = 17; n <= 128; n++) {
            unsigned char *p = (unsigned char *)make_b(n);
            for (size_t i = 0; i < n; i++) p[i] = (unsigned char)n;
            bad += malloc_usable_size(p) != want(n, packed);
            ::operator delete(p, n);
        }
    hsmalloc_heap_stats_self(&after);
    for (int i = 0; i < N; i++) bs.push_back(make_b(24));  // 24 bytes again, after the others
    std::set<uintptr_t> a_slices;
    for (Obj *o : as) a_slices.insert((uintptr_t)o >> 16);
    size_t shared = 0;
    for (void *p : bs) {
        shared += a_slices.count((uintptr_t)p >> 16);
        bad += malloc_usable_size(p) != want(24, packed);
    }
    printf("usable %zu\napart %zu\n", bad, shared);
    printf("counted %llu %llu %llu\n", (unsigned long long)(after.allocs - before.allocs),
           (unsigned long long)(after.requested_bytes - before.requested_bytes),
           (unsigned long long)(after.frees - before.frees));
    hsmalloc_heap_stats_self(&before);  // site A (lane 0: malloc's classes, hot sizes too)
    for (int i = 0; i < N; i++) delete make_a();
    Obj *a = make_a();
    hsmalloc_heap_stats_self(&after);
    printf("lane0 %zu counted %llu %llu %llu\n", malloc_usable_size(a),
           (unsigned long long)(after.allocs - before.allocs),
           (unsigned long long)(after.requested_bytes - before.requested_bytes),
           (unsigned long long)(after.frees - before.frees));
    delete a;
    uint64_t hot_before = hot32();
    for (int i = 0; i < N; i++) delete make_c();
    printf("hot32 %llu\n", (unsigned long long)(hot32() - hot_before));

    static char buf[1 << 20] __attribute__((aligned(64)));
    hsmalloc_chain_t *c = hsmalloc_chain_create(buf, sizeof buf, 0);
    hsmalloc_chain_set_default(c);
    void *in = make_b(24);
    hsmalloc_chain_set_default(nullptr);
    void *out = make_b(24);
    auto inside = [](void *p) { return (char *)p >= buf && (char *)p < buf + sizeof buf; };
    printf("chain %d %d\n", (int)inside(in), (int)(inside(out) || a_slices.count((uintptr_t)out >> 16)));
    ::operator delete(in);
    ::operator delete(out);
    hsmalloc_chain_destroy(c);
    for (Obj *o : as) delete o;
    for (void *p : bs) ::operator delete(p, 24);
    return nullptr;
}

int main(int argc, char **argv) {
    if (&hsmalloc_chain_create == nullptr) {
        fprintf(stderr, "site_sizes: needs libhsmalloc preloaded\n");
        return 2;
    }
    int packed = argc > 1 && argv[1][0] == 'p';
    pthread_t t;
    pthread_create(&t, nullptr, worker, &packed);
    pthread_join(t, nullptr);
    return 0;
}
