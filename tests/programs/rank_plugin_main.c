/* Ranking trap: a plugin without symbols. run_filters() calls the four filters of
 * librank_plugin.so (argv[1], dlopen'd; built stripped: rank_plugin.c) 1,000 times each:
 * 4,000 64-byte blocks along four paths that meet in the plugin's unnamed helper.
 * load_mesh() allocates 800 blocks of 64 bytes itself. The plugin's frames are `??`:
 * runtime, never ranked; run_filters (4,000), the user code that calls into the
 * plugin, is the first fix target. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

struct rank_filters {
    void (*run[4])(int);
};

static long sink;

__attribute__((noinline)) void load_mesh(void)
{
    for (int i = 0; i < 800; i++) {
        char *p = malloc(64);
        p[0] = (char)i;
        sink += p[0];
        free(p);
    }
}

__attribute__((noinline)) void run_filters(struct rank_filters *f)
{
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 1000; i++)
            f->run[k](i);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    void (*reg)(struct rank_filters *) = (void (*)(struct rank_filters *))dlsym(lib, "rank_plugin_register");
    struct rank_filters filters;
    reg(&filters);
    load_mesh();
    run_filters(&filters);
    printf("%ld\n", sink);
    return 0;
}
