/* dlopen()s the library named in argv[1] and calls it: 9339 x5 counted, and the
 * library listed in the module map (tests/e2e/test_record_process.py). With a second
 * argument "close", dlclose()s it before exit: still listed, stacks symbolized. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 1;
    }
    int (*work)(int) = (int (*)(int))dlsym(lib, "rec_dlib_work");
    printf("%d\n", work(5));
    if (argc > 2 && strcmp(argv[2], "close") == 0 && dlclose(lib) != 0)
        return 1;
    return 0;
}
