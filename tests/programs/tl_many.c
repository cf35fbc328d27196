/* More boundary samples than the recorder's sample ring holds (4096): argv[1] passes
 * through region "step" (tests/e2e/test_timeline_record.py). None may be lost: the ring is
 * flushed by the appending thread when it fills. */
#include <stdlib.h>

#include "heapscope.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 5000;
    for (long i = 0; i < n; i++) {
        HEAPSCOPE_REGION_BEGIN("step");
        free(malloc(100));
        HEAPSCOPE_REGION_END();
    }
    return 0;
}
