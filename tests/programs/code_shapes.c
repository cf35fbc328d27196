/* Functions of known shapes for the code reader (symbolize/code.py): a wrapper with an
 * error path, a loop around malloc, a function passing its block on, one freeing its
 * temporary, and one too long for its code to tell (over 96 instructions). */
#include <stdio.h>
#include <stdlib.h>

static long counted;
volatile double big_sink[64];

__attribute__((noinline)) void *take(size_t n)
{
    void *p = malloc(n);
    if (p == NULL) {
        perror("take");
        exit(1);
    }
    counted++;
    return p;
}

__attribute__((noinline)) void keep(void *p) { counted += p != NULL; }

__attribute__((noinline)) void fill(void **table, int n)
{
    for (int i = 0; i < n; i++)
        table[i] = malloc(16);
}

__attribute__((noinline)) void pass_on(void) { keep(malloc(16)); }

__attribute__((noinline)) void own_temporary(size_t n)
{
    volatile char *p = malloc(n);
    p[0] = 1;
    free((void *)p);
}

#define S(k) big_sink[k] = big_sink[(k) + 1] * 3.0 + (k);
__attribute__((noinline)) void *long_one(size_t n)
{
    S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7) S(8) S(9) S(10) S(11) S(12) S(13) S(14) S(15)
    S(16) S(17) S(18) S(19) S(20) S(21) S(22) S(23) S(24) S(25) S(26) S(27) S(28) S(29)
    return malloc(n);
}

int main(void)
{
    void *table[4];
    fill(table, 4);
    pass_on();
    own_temporary(16);
    free(take(8));
    free(long_one(8));
    printf("%ld\n", counted);
    return 0;
}
