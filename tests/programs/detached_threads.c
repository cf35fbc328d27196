/* 64 detached threads, each keeps one block of 4040 bytes and ends; main waits for
 * them (tests/e2e/test_process_endings.py): 65 threads allocated. A detached thread's
 * end frees glibc's thread-local blocks after its key destructors have run. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_int done;
static void *volatile sink;

static void *work(void *arg)
{
    sink = malloc(4040);
    atomic_fetch_add(&done, 1);
    return arg;
}

int main(void)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < 64; i++) {
        pthread_t t;
        if (pthread_create(&t, &attr, work, NULL) != 0)
            return 2;
    }
    while (atomic_load(&done) < 64)
        usleep(1000);
    usleep(100000); /* the last ones finish ending */
    return 0;
}
