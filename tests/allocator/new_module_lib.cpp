// A shared library whose code calls operator new (tests/allocator/test_new_module.py):
// built twice, with and without its .comment section.
#include <stdio.h>

#include "new_module_objs.h"

extern "C" void lib_report(const char *who) {
    int odd = 0;
    size_t usable = 0;
    new_objects(&odd, &usable);
    printf("%s %d %zu\n", who, odd, usable);
}
