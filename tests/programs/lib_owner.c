/* A shared library linked by lib_owner_main.c (tests/e2e/test_report_by_library.py): each call of
 * lib_owner_work() allocates 1 block of 1111 bytes with malloc and, through the C
 * runtime, 1 block of 23 bytes (strdup of a 22-character string) and 1 of 3 * 1212
 * bytes (calloc); all are kept until lib_owner_release(). */
#include <stdlib.h>
#include <string.h>

#define MAX_CALLS 64

static void *kept[3 * MAX_CALLS];
static int nkept;

void lib_owner_work(void)
{
    if (nkept + 3 > 3 * MAX_CALLS)
        abort();
    kept[nkept++] = malloc(1111);
    kept[nkept++] = strdup("library-owned-string!!");   /* 22 characters + NUL */
    kept[nkept++] = calloc(3, 1212);
}

void lib_owner_release(void)
{
    while (nkept > 0)
        free(kept[--nkept]);
}
