/* Main program of the --by library test (tests/e2e/test_report_by_library.py), linked against
 * liblib_owner.so: the main program allocates 5 blocks of 3333 bytes (malloc) and
 * 2 of 4444 (calloc(2, 2222)) itself, and through strdup 4 blocks of 23 bytes; it
 * calls lib_owner_work() 7 times (7 x 1111, 7 x 23, 7 x 3636 bytes in the library). */
#include <stdlib.h>
#include <string.h>

void lib_owner_work(void);
void lib_owner_release(void);

static void *volatile sink;

int main(void)
{
    for (int i = 0; i < 5; i++) {
        sink = malloc(3333);
        free(sink);
    }
    for (int i = 0; i < 2; i++) {
        sink = calloc(2, 2222);
        free(sink);
    }
    for (int i = 0; i < 4; i++) {
        sink = strdup("main-owned-string-xyz!");   /* 22 characters + NUL */
        free(sink);
    }
    for (int i = 0; i < 7; i++)
        lib_owner_work();
    lib_owner_release();
    return 0;
}
