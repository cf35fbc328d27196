/* Ranking trap: a worker thread beside the main thread's driver chain. 48-byte blocks:
 * the main thread runs main -> run_simulation() -> time_loop(), which calls assemble()
 * (6,000) and boundary() (2,000), both through element_matrix() (8,000), and
 * write_output() -> format_row() (1,000): 9,000 blocks. With an argument "worker", a
 * thread runs monitor_main() -> monitor(), which calls report_a() (500) and report_b()
 * (300), both through write_log(): 800 blocks, 8.2% of 9,800. The main thread's chain
 * then carries 91.8%, under the 95% trunk share of the whole; per root (main's start,
 * the thread's start routine) run_simulation and time_loop are trunk and element_matrix
 * is first, as without the worker; the worker's own drivers monitor_main and monitor
 * are trunk, and write_log is its fix target. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long sink;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void use(char *p, int v)
{
    p[0] = (char)v;
    pthread_mutex_lock(&lock);
    sink += p[0];
    pthread_mutex_unlock(&lock);
    free(p);
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
    for (int r = 0; r < 1000; r++)
        format_row(r);
}

__attribute__((noinline)) void time_loop(void)
{
    assemble();
    boundary();
    write_output();
}

__attribute__((noinline)) void run_simulation(void)
{
    time_loop();
}

__attribute__((noinline)) void write_log(int n)
{
    use(malloc(48), n);
}

__attribute__((noinline)) void report_a(void)
{
    for (int i = 0; i < 500; i++)
        write_log(i);
}

__attribute__((noinline)) void report_b(void)
{
    for (int i = 0; i < 300; i++)
        write_log(i);
}

__attribute__((noinline)) void monitor(void)
{
    report_a();
    report_b();
}

__attribute__((noinline)) void *monitor_main(void *arg)
{
    (void)arg;
    monitor();
    return NULL;
}

int main(int argc, char **argv)
{
    int worker = argc > 1 && strcmp(argv[1], "worker") == 0;
    pthread_t t;
    if (worker && pthread_create(&t, NULL, monitor_main, NULL) != 0)
        return 1;
    run_simulation();
    if (worker)
        pthread_join(t, NULL);
    printf("%ld\n", sink);
    return 0;
}
