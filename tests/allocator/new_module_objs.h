// 64 new of a 24-byte object from the calling module (tests/allocator/new_module.cpp and
// new_module_lib.cpp): how many were not 16-byte aligned, and their usable size.
#include <malloc.h>
#include <stdint.h>

struct Obj24 {
    void *a, *b;
    int c;
};

static inline void new_objects(int *odd, size_t *usable) {
    *odd = 0;
    for (int i = 0; i < 64; i++) {
        Obj24 *o = new Obj24{nullptr, nullptr, i};
        *odd += ((uintptr_t)o & 15) != 0;
        *usable = malloc_usable_size(o);
    }
}
