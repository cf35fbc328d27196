/* An allocator between the recorder and glibc's (tests/e2e/test_timeline_single_thread.py):
 * forwards every call to glibc's malloc family, and ends the process with one line
 * ("spy: ...") if a thread whose name starts with "heapscope" calls it: the recorder's
 * own threads must never call the allocator (src/recorder/core/single_thread.c).
 * Built with: gcc -shared -fPIC -O2 -o libspy.so spy_allocator.c */
#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static void check(const char *what)
{
    char name[16] = {0};
    if (prctl(PR_GET_NAME, name) == 0 && strncmp(name, "heapscope", 9) == 0) {
        static const char msg[] = "spy: the recorder's thread called the allocator: ";
        (void)!write(2, msg, sizeof msg - 1);
        (void)!write(2, what, strlen(what));
        (void)!write(2, "\n", 1);
        _exit(70);
    }
}

void *malloc(size_t n)
{
    check("malloc");
    return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    check("calloc");
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    check("realloc");
    return __libc_realloc(p, n);
}

void free(void *p)
{
    check("free");
    __libc_free(p);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    check("posix_memalign");
    void *p = __libc_memalign(align, n);
    if (!p)
        return 12; /* ENOMEM */
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    check("aligned_alloc");
    return __libc_memalign(align, n);
}

void *memalign(size_t align, size_t n)
{
    check("memalign");
    return __libc_memalign(align, n);
}
