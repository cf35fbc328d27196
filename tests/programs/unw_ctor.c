/* Stacks at start-up (tests/e2e/test_unwind_cache.py). Built with -DCTOR_LIB as a
 * shared library whose constructor allocates 300 times (56 bytes) through make_one:
 * ld.so runs it from _dl_init, called by its entry code, which has no call frame
 * information (libunwind ends such a stack there, its rbp being 0). Built without,
 * a program linked with that library whose main allocates 300 times (72 bytes). */
#include <stdlib.h>

#ifdef CTOR_LIB
void *volatile sink;

__attribute__((noinline)) void make_one(size_t size)
{
    sink = malloc(size);
    free(sink);
    sink = sink; /* not a tail call */
}

__attribute__((constructor)) static void at_start(void)
{
    for (int i = 0; i < 300; i++)
        make_one(56);
}
#else
void make_one(size_t size);

int main(void)
{
    for (int i = 0; i < 300; i++)
        make_one(72);
    return 0;
}
#endif
