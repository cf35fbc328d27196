// Which modules get packed (8-byte aligned) blocks from operator new
// (tests/allocator/test_new_module.py): 64 new of a 24-byte object here, then in each
// library named on the command line (dlopen, lib_report, dlclose in turn); each prints
// "WHO ODD USABLE": how many blocks were not 16-byte aligned, and the usable size.
//   ./new_module [LIB...]
// NEW_MODULE_REPLACE=FILE: FILE is renamed over each library after it was loaded (a
// library rebuilt while the program runs).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "new_module_objs.h"

int main(int argc, char **argv) {
    int odd = 0;
    size_t usable = 0;
    new_objects(&odd, &usable);
    printf("main %d %zu\n", odd, usable);
    for (int k = 1; k < argc; k++) {
        void *lib = dlopen(argv[k], RTLD_NOW);
        if (lib == NULL) {
            printf("FAILED %s\n", dlerror());
            return 1;
        }
        const char *replace = getenv("NEW_MODULE_REPLACE");
        if (replace != NULL && rename(replace, argv[k]) != 0) {
            printf("FAILED rename\n");
            return 1;
        }
        char who[16];
        snprintf(who, sizeof who, "lib%d", k);
        ((void (*)(const char *))dlsym(lib, "lib_report"))(who);
        dlclose(lib);
    }
    return 0;
}
