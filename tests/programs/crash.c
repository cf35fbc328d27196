/* A program that dies of a signal after known allocations (tests/e2e/test_crash_snapshot.py):
 * 5 blocks of 24 bytes and 3 of 1000 bytes, kept, then by the first argument:
 *   segv      writes through a null pointer (SIGSEGV, a fault)
 *   abort     abort() (SIGABRT, raised)
 *   fpe       an integer division by zero (SIGFPE, a fault)
 *   overflow  unbounded recursion (SIGSEGV on a guard page: the handler needs its own stack)
 *   handled   installs its own SIGSEGV handler, which prints "own handler" and
 *             _exit(42)s, then faults: the crash snapshot is written, then its handler runs
 *   ignored   ignores SIGSEGV, sends itself one with kill() (nothing happens), prints
 *             "survived" and exits 0
 *   recovers  as a garbage collector's write barrier: 100 writes to a protected page,
 *             each fault repaired by its own SA_SIGINFO handler (mprotect), which
 *             returns; prints "faults 100" and exits 0 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile int zero, hundred = 100;

static void own_handler(int sig)
{
    (void)sig;
    static const char msg[] = "own handler\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(42);
}

static char *page;
static volatile int faults;

static void repair(int sig, siginfo_t *info, void *uc)
{
    (void)sig, (void)uc;
    if ((char *)info->si_addr != page)
        _exit(99);
    faults++;
    mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

static int recurse(volatile char *prev)
{
    volatile char frame[4096];
    frame[0] = prev ? prev[0] + 1 : 0;
    return recurse(frame) + frame[1];
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    void *keep[8];
    for (int i = 0; i < 5; i++)
        keep[i] = malloc(24);
    for (int i = 5; i < 8; i++)
        keep[i] = malloc(1000);
    if (strcmp(mode, "segv") == 0)
        *(volatile int *)0 = 1;
    else if (strcmp(mode, "abort") == 0)
        abort();
    else if (strcmp(mode, "fpe") == 0)
        printf("%d\n", hundred / zero);
    else if (strcmp(mode, "overflow") == 0)
        return recurse(NULL);
    else if (strcmp(mode, "handled") == 0) {
        signal(SIGSEGV, own_handler);
        *(volatile int *)0 = 1;
    } else if (strcmp(mode, "ignored") == 0) {
        signal(SIGSEGV, SIG_IGN);
        kill(getpid(), SIGSEGV);
        puts("survived");
    } else if (strcmp(mode, "recovers") == 0) {
        page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = repair;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, NULL);
        for (int i = 0; i < 100; i++) {
            mprotect(page, 4096, PROT_READ);
            *(volatile char *)page = (char)i;
        }
        printf("faults %d\n", faults);
    }
    for (int i = 0; i < 8; i++)
        free(keep[i]);
    return 0;
}
