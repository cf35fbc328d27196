// A shared library whose code calls operator new (tests/allocator/test_new_module.py):
// built twice, with and without its .comment section.
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>

struct Obj24 {
    void *a, *b;
    int c;
};

extern "C" void lib_report(const char *who) {
    int odd = 0;
    size_t usable = 0;
    for (int i = 0; i < 64; i++) {
        Obj24 *o = new Obj24{nullptr, nullptr, i};
        odd += ((uintptr_t)o & 15) != 0;
        usable = malloc_usable_size(o);
    }
    printf("%s %d %zu\n", who, odd, usable);
}
