/* Temporaries of several stack trace types per size, for `heapscope temporaries`' per-size
 * figures (tests/e2e/test_temporaries_per_size.py, record --track --sizes all). One
 * thread and no stdio, so nothing else allocates between these calls. A temporary is a
 * block freed before the thread's next allocation.
 *
 *   size 40  temp_a() 10, temp_b() 20, temp_c() 30 temporaries (three stack trace types)
 *            and keep_40(): 5 blocks never freed (a fourth type, no temporary):
 *            65 allocations, 60 temporaries, 4 types.
 *   size 72  temp_d() 7 and temp_e() 3 temporaries: 10 allocations, 10 temporaries, 2 types.
 * The churning functions share churn(); their callers make the stack trace types differ. */
#include <stdlib.h>

static void *kept[5];

__attribute__((noinline)) static void churn(size_t size, int n)
{
    for (int i = 0; i < n; i++) {
        void *volatile block = malloc(size);
        free(block);
    }
}

__attribute__((noinline)) void temp_a(void) { churn(40, 10); }
__attribute__((noinline)) void temp_b(void) { churn(40, 20); }
__attribute__((noinline)) void temp_c(void) { churn(40, 30); }
__attribute__((noinline)) void temp_d(void) { churn(72, 7); }
__attribute__((noinline)) void temp_e(void) { churn(72, 3); }

__attribute__((noinline)) void keep_40(void)
{
    for (int i = 0; i < 5; i++)
        kept[i] = malloc(40);
}

int main(void)
{
    temp_a();
    temp_b();
    temp_c();
    keep_40();
    temp_d();
    temp_e();
    return kept[0] == NULL;
}
