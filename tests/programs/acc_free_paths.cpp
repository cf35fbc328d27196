// acc_free_paths: the frees record --access must tell apart on its fast path
// (tests/e2e/test_access_free_paths.py): blocks measured where they are (64 KiB or more,
// or aligned beyond a page and a page or more long) from the small ones of the pool and
// from the program's other blocks. Each function allocates one kind of block per round,
// writes a known part of it and frees it at once, by the call named:
//   place_heap     malloc(100000), under glibc's mmap threshold: its first 65536 bytes
//   place_mapped   malloc(40 MiB), above glibc's largest threshold (always mapped): its first 65536
//   place_exact    malloc(65536): the smallest measured in place, all written
//   place_align    memalign(8192, 12288): a page-aligned chunk under 64 KiB, untouched
//   place_align_big aligned_alloc(64, 70000): all 70000 bytes written
//   place_new      new char[131072], delete[] (unsized): its first 65536 bytes
//   place_sized    operator new(98304), sized operator delete: untouched
//   pool_used      malloc(3000), all written; pool_unused malloc(2000), untouched
//   realloc_place  malloc(80000) written, realloc_grown to 160000 (moved or grown), freed
// Between rounds it allocates and frees 1000 small blocks, none of them written past the
// first byte, so that the allocator reuses the addresses of the blocks above.
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

static unsigned long checksum;

static void write_first(void *p, size_t n)
{
    memset(p, 0x5a, n);
    checksum += ((unsigned char *)p)[n - 1];
}

static void *need(void *p)
{
    if (!p) {
        fprintf(stderr, "allocation failed\n");
        exit(1);
    }
    return p;
}

__attribute__((noinline)) static void *place_heap(void) { return need(malloc(100000)); }
__attribute__((noinline)) static void *place_mapped(void) { return need(malloc((size_t)40 << 20)); }
__attribute__((noinline)) static void *place_exact(void) { return need(malloc(65536)); }
__attribute__((noinline)) static void *place_align(void) { return need(memalign(8192, 12288)); }
__attribute__((noinline)) static void *place_align_big(void)
{
    return need(aligned_alloc(64, 70000));
}
__attribute__((noinline)) static char *place_new(void) { return new char[131072]; }
__attribute__((noinline)) static void *place_sized(void) { return ::operator new(98304); }
__attribute__((noinline)) static void *pool_used(void) { return need(malloc(3000)); }
__attribute__((noinline)) static void *pool_unused(void) { return need(malloc(2000)); }
__attribute__((noinline)) static void *realloc_place(void) { return need(malloc(80000)); }
__attribute__((noinline)) static void *realloc_grown(void *p) { return need(realloc(p, 160000)); }
__attribute__((noinline)) static void *small_churn(size_t n) { return need(malloc(n)); }

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 10;
    for (int r = 0; r < rounds; r++) {
        void *p = place_heap();
        write_first(p, 65536);
        free(p);
        p = place_mapped();
        write_first(p, 65536);
        free(p);
        p = place_exact();
        write_first(p, 65536);
        free(p);
        p = place_align();
        free(p);
        p = place_align_big();
        write_first(p, 70000);
        free(p);
        char *a = place_new();
        write_first(a, 65536);
        delete[] a;
        p = place_sized();
        ::operator delete(p, 98304);
        p = pool_used();
        write_first(p, 3000);
        free(p);
        free(pool_unused());
        p = realloc_place();
        write_first(p, 80000);
        p = realloc_grown(p);
        free(p);
        for (int i = 0; i < 1000; i++) {
            char *s = (char *)small_churn(16 + i % 200);
            s[0] = (char)i;
            checksum += (unsigned char)s[0];
            free(s);
        }
    }
    printf("checksum %lu\n", checksum);
    return 0;
}
