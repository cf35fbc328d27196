/* Notes test: main calls into three libraries built from this file without debug info
 * (-DLIB=1..3, tests/e2e/test_progress_and_notes.py): each allocates 16 bytes 10 times,
 * so symbolizing its stacks says "no debug info for libquietN.so" three times, which
 * the output says once with a count. Built without -DLIB: the program. */
#include <stdlib.h>

#ifdef LIB
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
void CAT(quiet_work, LIB)(void)
{
    for (int i = 0; i < 10; i++) {
        char *volatile p = malloc(16);
        p[0] = 1;
        free(p);
    }
}
#else
void quiet_work1(void);
void quiet_work2(void);
void quiet_work3(void);

int main(void)
{
    quiet_work1();
    quiet_work2();
    quiet_work3();
    return 0;
}
#endif
