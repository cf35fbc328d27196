/* The unwind cache's call-site table and joins (tests/e2e/test_unwind_cache.py).
 *
 * "wide": 2,048 functions site_<n>, each with its own call to malloc (24 bytes),
 * called in turn from one loop in main, 20 rounds: 2,048 call sites that each come
 * back, more than the 512 sites a thread's table holds at first. 40,960
 * allocations, 2,048 stacks of 20.
 *
 * "deep": down(d) recurses d levels and allocates 40 bytes at the bottom, for
 * d = 1..40 in turn, 10 rounds: each new depth's stack is the last one's plus one
 * frame of down, in the same slots above. 400 allocations, 40 stacks of 10.
 *
 * "threads": "deep" in 8 threads one after the other, each on a stack of its own
 * (pthread_attr_setstack): each new thread takes over the thread record (and the
 * unwind cache) the one before handed back, on another stack. 3,200 allocations,
 * 40 stacks of 80 (the thread's start adds the same frames to every one). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void *volatile sink;

#define SITE(n)                                                                                    \
    __attribute__((noinline)) static void site_##n(void)                                           \
    {                                                                                              \
        sink = malloc(24);                                                                         \
        free(sink);                                                                                \
    }
#define SITE4(n) SITE(n##0) SITE(n##1) SITE(n##2) SITE(n##3)
#define SITE16(n) SITE4(n##0) SITE4(n##1) SITE4(n##2) SITE4(n##3)
#define SITE64(n) SITE16(n##0) SITE16(n##1) SITE16(n##2) SITE16(n##3)
#define SITE256(n) SITE64(n##0) SITE64(n##1) SITE64(n##2) SITE64(n##3)
#define SITE1024(n) SITE256(n##0) SITE256(n##1) SITE256(n##2) SITE256(n##3)
SITE1024(1)
SITE1024(2)

#define PTR(n) site_##n,
#define PTR4(n) PTR(n##0) PTR(n##1) PTR(n##2) PTR(n##3)
#define PTR16(n) PTR4(n##0) PTR4(n##1) PTR4(n##2) PTR4(n##3)
#define PTR64(n) PTR16(n##0) PTR16(n##1) PTR16(n##2) PTR16(n##3)
#define PTR256(n) PTR64(n##0) PTR64(n##1) PTR64(n##2) PTR64(n##3)
#define PTR1024(n) PTR256(n##0) PTR256(n##1) PTR256(n##2) PTR256(n##3)
static void (*const sites[2048])(void) = {PTR1024(1) PTR1024(2)};

__attribute__((noinline)) void down(int d)
{
    if (d == 0) {
        sink = malloc(40);
        free(sink);
    } else {
        down(d - 1);
    }
    sink = sink; /* not a tail call */
}

static void deep(void)
{
    for (int round = 0; round < 10; round++)
        for (int d = 1; d <= 40; d++)
            down(d);
}

static void *deep_thread(void *arg)
{
    (void)arg;
    deep();
    return NULL;
}

#define STACK (256 * 1024)
static char stacks[8][STACK] __attribute__((aligned(4096)));

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "wide";
    if (strcmp(how, "deep") == 0) {
        deep();
    } else if (strcmp(how, "threads") == 0) {
        for (int t = 0; t < 8; t++) {
            pthread_attr_t attr;
            pthread_t thread;
            pthread_attr_init(&attr);
            pthread_attr_setstack(&attr, stacks[t], STACK);
            if (pthread_create(&thread, &attr, deep_thread, NULL) != 0)
                return 1;
            pthread_join(thread, NULL);
            pthread_attr_destroy(&attr);
        }
    } else {
        for (int round = 0; round < 20; round++)
            for (int i = 0; i < 2048; i++)
                sites[i]();
    }
    return 0;
}
