/* Ranking trap: a kernel whose name says it makes something, make_residual(), which takes
 * a 96-byte vector for itself (12 doubles), computes the residual into it, frees it and
 * returns only its norm. solve() calls it from one line in each of 500 iterations,
 * check() once: 501 blocks of 96 bytes. Its code loops (the residual, the norm): it
 * works on the memory it takes, it does not hand it out. The fix is inside it (keep the
 * vector across calls): it is the first fix target, not a wrapper seen through to solve(). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 12
#define ITERATIONS 500

static double x[N], b[N];

__attribute__((noinline)) double make_residual(double shift)
{
    double *r = malloc(N * sizeof *r);
    double norm = 0;
    for (int i = 0; i < N; i++)
        r[i] = b[i] - shift * x[i];
    for (int i = 0; i < N; i++)
        norm += r[i] * r[i];
    free(r);
    return sqrt(norm);
}

__attribute__((noinline)) double solve(void)
{
    double norm = 0;
    for (int it = 0; it < ITERATIONS; it++) {
        norm = make_residual(1.0 / (it + 1));
        x[it % N] += 0.5 * norm / N;
    }
    return norm;
}

__attribute__((noinline)) double check(void)
{
    return make_residual(1.0);
}

int main(void)
{
    for (int i = 0; i < N; i++)
        b[i] = i + 1;
    double a = solve();
    printf("%.6f %.6f\n", a, check());
    return 0;
}
