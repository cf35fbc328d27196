/* Prints malloc_usable_size(malloc(N)) for each size N on the command line, one per
 * line, from a fresh process: what glibc gives a program whose heap is new, as in
 * rep_lifetimes.c (a busy process may get a larger reused chunk instead). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        void *p = malloc((size_t)atol(argv[i]));
        printf("%zu\n", malloc_usable_size(p));
    }
    return 0;
}
