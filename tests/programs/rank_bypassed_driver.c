/* Ranking trap: a driver bypassed by one input-reading path. 48-byte blocks: 100 from
 * main -> read_input(), and 9,500 under main -> run_simulation(): assemble() 6,000 and
 * boundary() 2,000 both through element_matrix() (8,000), write_output() -> format_row()
 * 1,500. run_simulation is on 99% of the allocations above the first real branch: it
 * is trunk, never a fix target, although read_input's path does not pass through it.
 * element_matrix (8,000) is the first fix target. */
#include <stdio.h>
#include <stdlib.h>

static long sink;

__attribute__((noinline)) static void use(char *p, int v)
{
    p[0] = (char)v;
    sink += p[0];
    free(p);
}

__attribute__((noinline)) void read_input(void)
{
    for (int i = 0; i < 100; i++)
        use(malloc(48), i);
}

__attribute__((noinline)) void element_matrix(int e)
{
    use(malloc(48), e);
}

__attribute__((noinline)) void assemble(void)
{
    for (int e = 0; e < 6000; e++)
        element_matrix(e);
}

__attribute__((noinline)) void boundary(void)
{
    for (int e = 0; e < 2000; e++)
        element_matrix(e);
}

__attribute__((noinline)) void format_row(int r)
{
    use(malloc(48), r);
}

__attribute__((noinline)) void write_output(void)
{
    for (int r = 0; r < 1500; r++)
        format_row(r);
}

__attribute__((noinline)) void run_simulation(void)
{
    assemble();
    boundary();
    write_output();
}

int main(void)
{
    read_input();
    run_simulation();
    printf("%ld\n", sink);
    return 0;
}
