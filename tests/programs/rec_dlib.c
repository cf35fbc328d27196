/* A library the test program dlopen()s (tests/e2e/test_record_process.py). */
#include <stdlib.h>

void *volatile rec_dlib_sink;

int rec_dlib_work(int n)
{
    for (int i = 0; i < n; i++) {
        rec_dlib_sink = malloc(9339);
        free(rec_dlib_sink);
    }
    return n;
}
