/* Ranking trap: the caller of a ranked callee. Run on one thread (OMP_NUM_THREADS=1),
 * libgomp allocates a team for every `#pragma omp parallel` and frees it at the region's
 * end. solve() opens one region itself and calls smooth() 499 times, one region each:
 * it passes 99.8% of its allocations into smooth(), at the same distance from the
 * allocation, so smooth() ranks first and solve() right after it; output() opens 100
 * regions. The runtime pattern: libgomp allocates per call of GOMP_parallel, from
 * smooth (499), output (100) and solve (1). */
#include <stdio.h>

#define N 64

static double field[N];

__attribute__((noinline)) void smooth(void)
{
#pragma omp parallel
    for (int i = 1; i < N - 1; i++)
        field[i] = 0.5 * field[i] + 0.25 * (field[i - 1] + field[i + 1]);
}

__attribute__((noinline)) void solve(void)
{
#pragma omp parallel
    for (int i = 0; i < N; i++)
        field[i] = i;
    for (int it = 0; it < 499; it++)
        smooth();
}

__attribute__((noinline)) void output(void)
{
    double sum = 0;
    for (int k = 0; k < 100; k++) {
#pragma omp parallel reduction(+ : sum)
        for (int i = 0; i < N; i++)
            sum += field[i];
    }
    printf("%f\n", sum);
}

int main(void)
{
    solve();
    output();
    return 0;
}
