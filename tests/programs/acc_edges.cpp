// acc_edges: the allocation calls record --access must hand out and take back exactly as
// the allocator would (tests/e2e/test_access_edges.py). Every block's contents are checked;
// the output is a checksum of them and must not change under the recorder.
//   realloc      a block grown 100 -> 5000 -> 300000 bytes and shrunk back, contents kept
//   grow_large   realloc_grow: 300000 bytes written, grown to 1 MiB, not touched again:
//                the kept bytes count as touched, the new ones not (and are never dropped)
//   cxx          new/delete, new[]/delete[], sized, nothrow, aligned (64, 4096, 8192)
//   aligned      posix_memalign, aligned_alloc, memalign, valloc, pvalloc; usable sizes
//   calloc       zero, small and large
//   fork         blocks allocated before a fork, freed in the child and in the parent;
//                blocks freed just before it are the parent's, not the child's
//   signal       the program's own signal handler runs
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <initializer_list>
#include <new>

static uint64_t checksum;

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31 + seed);
}

static void check(const unsigned char *p, size_t n, unsigned seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 31 + seed)) {
            fprintf(stderr, "%s: byte %zu changed\n", what, i);
            exit(1);
        }
    checksum += n * 7 + seed;
}

static void need(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "%s failed\n", what);
        exit(1);
    }
}

__attribute__((noinline)) static void reallocs(int round)
{
    unsigned char *p = (unsigned char *)malloc(100);
    fill(p, 100, round);
    p = (unsigned char *)realloc(p, 5000);
    check(p, 100, round, "realloc 5000");
    fill(p, 5000, round + 1);
    p = (unsigned char *)realloc(p, 300000);
    check(p, 5000, round + 1, "realloc 300000");
    need(malloc_usable_size(p) >= 300000, "usable 300000");
    p = (unsigned char *)realloc(p, 40);
    check(p, 40, round + 1, "realloc 40");
    p = (unsigned char *)reallocarray(p, 30, 100);
    check(p, 40, round + 1, "reallocarray");
    free(realloc(p, 0)); /* a free (glibc: NULL back), or a minimal block */
}

__attribute__((noinline)) static unsigned char *realloc_grow(unsigned char *p)
{
    return (unsigned char *)realloc(p, 1 << 20);
}

__attribute__((noinline)) static void grow_large(int round)
{
    unsigned char *p = (unsigned char *)malloc(300000);
    fill(p, 300000, round);
    p = realloc_grow(p);
    check(p, 300000, round, "grown to 1 MiB"); // the kept bytes were never dropped
    free(p);
}

struct alignas(64) Line {
    char bytes[200];
};
struct alignas(4096) Page {
    char bytes[5000];
};
struct alignas(8192) Wide {
    char bytes[300];
};

__attribute__((noinline)) static void cxx(int round)
{
    char *s = new char[3000];
    fill((unsigned char *)s, 3000, round);
    check((unsigned char *)s, 3000, round, "new[]");
    delete[] s;
    Line *l = new Line;
    need((uintptr_t)l % 64 == 0, "alignas(64)");
    fill((unsigned char *)l->bytes, sizeof l->bytes, round);
    delete l;
    Page *pg = new Page;
    need((uintptr_t)pg % 4096 == 0, "alignas(4096)");
    fill((unsigned char *)pg->bytes, sizeof pg->bytes, round);
    check((unsigned char *)pg->bytes, sizeof pg->bytes, round, "Page");
    delete pg;
    Wide *w = new Wide[3];
    need((uintptr_t)w % 8192 == 0, "alignas(8192)");
    delete[] w;
    int *n = new (std::nothrow) int[700];
    need(n != nullptr, "nothrow new");
    n[699] = round;
    delete[] n;
}

__attribute__((noinline)) static void aligned(int round)
{
    void *a = nullptr;
    need(posix_memalign(&a, 64, 3000) == 0 && (uintptr_t)a % 64 == 0, "posix_memalign 64");
    fill((unsigned char *)a, 3000, round);
    check((unsigned char *)a, 3000, round, "posix_memalign");
    need(malloc_usable_size(a) >= 3000, "usable posix_memalign");
    free(a);
    need(posix_memalign(&a, 8192, 2000) == 0 && (uintptr_t)a % 8192 == 0, "posix_memalign 8192");
    free(a);
    need(posix_memalign(&a, 3, 10) != 0, "posix_memalign 3 refused");
    void *b = aligned_alloc(4096, 8192);
    need(b && (uintptr_t)b % 4096 == 0, "aligned_alloc");
    fill((unsigned char *)b, 8192, round);
    free(b);
    void *c = memalign(256, 1000);
    need(c && (uintptr_t)c % 256 == 0, "memalign");
    free(c);
    void *d = valloc(5000);
    need(d && (uintptr_t)d % 4096 == 0, "valloc");
    fill((unsigned char *)d, 5000, round);
    free(d);
    void *e = pvalloc(100);
    need(e && (uintptr_t)e % 4096 == 0 && malloc_usable_size(e) >= 100, "pvalloc");
    free(e);
}

__attribute__((noinline)) static void zeroed(int round)
{
    for (size_t n : {(size_t)24, (size_t)3000, (size_t)200000}) {
        unsigned char *p = (unsigned char *)calloc(1, n);
        for (size_t i = 0; i < n; i++)
            need(p[i] == 0, "calloc zero");
        fill(p, n, round);
        free(p);
    }
}

__attribute__((noinline)) static unsigned char *fork_alloc(size_t n) { return (unsigned char *)malloc(n); }

__attribute__((noinline)) static void *child_alloc(size_t n) { return malloc(n); }

static void forked(void)
{
    /* freed just before the fork: the recorder has not read them yet when it comes */
    for (int i = 0; i < 300; i++) {
        unsigned char *p = (unsigned char *)malloc(100 + (size_t)i % 7);
        fill(p, 100, i);
        free(p);
    }
    unsigned char *held[64];
    for (int i = 0; i < 64; i++) {
        held[i] = fork_alloc(i % 2 ? 3000 : 100000);
        fill(held[i], i % 2 ? 3000 : 100000, i);
    }
    fflush(stdout);
    pid_t child = fork();
    need(child >= 0, "fork");
    if (child == 0) {
        for (int i = 0; i < 64; i++) {
            check(held[i], i % 2 ? 3000 : 100000, i, "child");
            free(held[i]);
        }
        for (int i = 0; i < 200; i++)
            free(fork_alloc(4000));
        for (size_t n = 100; n < 300; n++) /* the child's own paths: rows of its own */
            free(child_alloc(n));
        _exit(0);
    }
    int status;
    need(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
         "child");
    for (int i = 0; i < 64; i++) {
        check(held[i], i % 2 ? 3000 : 100000, i, "parent");
        free(held[i]);
    }
}

static volatile sig_atomic_t handled;
static void on_usr1(int sig) { handled = sig; }

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 50;
    signal(SIGUSR1, on_usr1);
    for (int r = 0; r < rounds; r++) {
        reallocs(r);
        grow_large(r);
        cxx(r);
        aligned(r);
        zeroed(r);
    }
    forked();
    raise(SIGUSR1);
    need(handled == SIGUSR1, "the program's own handler");
    printf("checksum %llu\n", (unsigned long long)checksum);
    return 0;
}
