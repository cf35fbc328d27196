// hsmalloc's call-site lanes (src/allocator/site.c), observed from outside: objects of
// one size made by new at different call sites, in a fresh thread (a fresh heap).
//   ./site_lanes          prints, for sites 0..4 (five functions making 24-byte objects,
//                         N each, interleaved): "site K pages P shared S dense D" —
//                         P: 64 KiB slices its blocks lie in, S: of those, slices that
//                         also hold another site's blocks, D: consecutive blocks one block
//                         apart (32 bytes where new keeps 16-byte alignment, 24
//                         where it packs: code built by GCC, HSMALLOC_PACKED=all);
//                         then "remote ok": every block deleted by another thread, and a
//                         new round made and checked again (the freed blocks come back)
//   sizes                 malloc_usable_size of blocks from a lane, for 17..128 bytes
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <set>
#include <vector>

struct Obj {
    void *a, *b;
    int c;
};
static_assert(sizeof(Obj) == 24, "a 24-byte object");

template <int K>
__attribute__((noinline)) Obj *make() {
    return new Obj{nullptr, nullptr, K};
}
static Obj *(*const makers[5])() = {make<0>, make<1>, make<2>, make<3>, make<4>};
enum { SITES = 5, N = 2000 };
static std::vector<Obj *> objs[SITES];

static void fail(const char *what) {
    printf("FAILED %s\n", what);
    exit(1);
}

static void round_and_report(int print) {
    for (int i = 0; i < N; i++)
        for (int k = 0; k < SITES; k++) objs[k].push_back(makers[k]());
    std::set<uintptr_t> slices[SITES];
    for (int k = 0; k < SITES; k++)
        for (Obj *o : objs[k]) {
            if (o->c != k) fail("object contents");
            slices[k].insert((uintptr_t)o >> 16);
        }
    for (int k = 0; k < SITES; k++) {
        size_t shared = 0, dense = 0;
        for (uintptr_t s : slices[k])
            for (int j = 0; j < SITES; j++)
                if (j != k && slices[j].count(s)) {
                    shared++;
                    break;
                }
        size_t block = malloc_usable_size(objs[k][0]);
        for (size_t i = 1; i < objs[k].size(); i++)
            dense += (size_t)((char *)objs[k][i] - (char *)objs[k][i - 1]) == block;
        if (print) printf("site %d pages %zu shared %zu dense %zu\n", k, slices[k].size(), shared, dense);
    }
}

static void *remote_delete(void *) {
    for (int k = 0; k < SITES; k++) {
        for (Obj *o : objs[k]) delete o;
        objs[k].clear();
    }
    return nullptr;
}

static void *worker(void *arg) {
    if (arg != nullptr) {  // sizes
        for (size_t n = 17; n <= 128; n++) {
            void *p = ::operator new(n);
            printf("%zu %zu\n", n, malloc_usable_size(p));
            ::operator delete(p);
        }
        return nullptr;
    }
    round_and_report(1);
    pthread_t t;
    pthread_create(&t, nullptr, remote_delete, nullptr);
    pthread_join(t, nullptr);
    round_and_report(0);  // blocks come back through this thread's cache or the remote queue
    remote_delete(nullptr);
    printf("remote ok\n");
    return nullptr;
}

int main(int argc, char **argv) {
    pthread_t t;
    pthread_create(&t, nullptr, worker, argc > 1 && strcmp(argv[1], "sizes") == 0 ? argv : nullptr);
    pthread_join(t, nullptr);
    return 0;
}
