/* Ranking trap: OpenMP workers running the main thread's loop. main -> run() -> solve()
 * opens a parallel loop of 10,000 iterations on 2 threads (static schedule: 5,000 each);
 * each iteration allocates 40 bytes in kernel(), through cell() (7,500) or face()
 * (2,500). The worker's stacks start at clone -> libgomp -> solve._omp_fn.0, the main
 * thread's at _start -> main -> run -> solve -> GOMP_parallel -> solve._omp_fn.0: as one
 * tree neither root carries 95%, and the drivers ranked. Per root, run, solve and the
 * outlined loop body solve._omp_fn.0 are trunk, and kernel (10,000) is first. */
#include <stdio.h>
#include <stdlib.h>

static long sink;

__attribute__((noinline)) void kernel(int i)
{
    char *p = malloc(40);
    p[0] = (char)i;
    __atomic_add_fetch(&sink, p[0], __ATOMIC_RELAXED);
    free(p);
}

__attribute__((noinline)) void face(int i)
{
    kernel(i);
}

__attribute__((noinline)) void cell(int i)
{
    kernel(i);
}

__attribute__((noinline)) void solve(void)
{
#pragma omp parallel for num_threads(2) schedule(static)
    for (int i = 0; i < 10000; i++) {
        if (i % 4)
            cell(i);
        else
            face(i);
    }
}

__attribute__((noinline)) void run(void)
{
    solve();
}

int main(void)
{
    run();
    printf("%ld\n", sink);
    return 0;
}
