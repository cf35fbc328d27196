/* Ranking trap: the OpenMP runtime allocating per call of user code. phase_a() and
 * phase_b() open parallel regions that create deferred tasks; libgomp allocates each
 * task (GOMP_task -> malloc) in the thread that creates it: 100 regions x 4 tasks in
 * phase_a, 50 x 4 in phase_b, 600 blocks of one size. The cause is named: the OpenMP
 * runtime (libgomp) allocates per call of GOMP_task, from the task constructs of
 * phase_a (400) and phase_b (200). */
#include <stdio.h>

static double acc[8];

__attribute__((noinline)) void phase_a(int regions)
{
    for (int r = 0; r < regions; r++) {
#pragma omp parallel num_threads(2)
        {
#pragma omp single
            for (int t = 0; t < 4; t++) {
#pragma omp task firstprivate(t)
                acc[t] += t;
            }
        }
    }
}

__attribute__((noinline)) void phase_b(int regions)
{
    for (int r = 0; r < regions; r++) {
#pragma omp parallel num_threads(2)
        {
#pragma omp single
            for (int t = 0; t < 4; t++) {
#pragma omp task firstprivate(t)
                acc[t + 4] += t;
            }
        }
    }
}

int main(void)
{
    phase_a(100);
    phase_b(50);
    printf("%f %f\n", acc[1], acc[5]);
    return 0;
}
