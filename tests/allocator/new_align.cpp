// operator new keeps C++'s 16-byte alignment for code of unknown compiler
// (tests/allocator/test_site_lanes.py):
//   ./new_align align      prints the number of blocks of new(n), n = 16..256 from
//                          several call sites, that are not 16-byte aligned, and the
//                          number of malloc(n) blocks of the packed sizes that are not
//   ./new_align keep N     N new(24) kept live (the statistics count them exactly)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

__attribute__((noinline)) static void *site_a(size_t n) { return ::operator new(n); }
__attribute__((noinline)) static void *site_b(size_t n) { return ::operator new(n); }
__attribute__((noinline)) static void *site_c(size_t n) { return ::operator new[](n); }

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "keep") == 0) {
        static std::vector<void *> kept;
        kept.reserve(100000);
        for (long i = 0; i < atol(argv[2]); i++)
            kept.push_back(site_a(24));
        std::printf("kept %zu\n", kept.size());
        return 0;
    }
    size_t bad_new = 0, packed_malloc = 0;
    for (size_t n = 16; n <= 256; n++)
        for (int i = 0; i < 50; i++) {
            void *p[3] = {site_a(n), site_b(n), site_c(n)};
            for (void *q : p)
                bad_new += ((uintptr_t)q & 15) != 0;
            void *m = std::malloc(n);
            packed_malloc += ((uintptr_t)m & 15) != 0;
            if (i % 2) {
                ::operator delete(p[0]);
                ::operator delete(p[1]);
                ::operator delete[](p[2]);
                std::free(m);
            }
        }
    std::printf("%zu %zu\n", bad_new, packed_malloc);
    return 0;
}
