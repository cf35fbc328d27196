/* The plugin of rank_plugin_main.c, built without -g, its internals hidden and the
 * library stripped (tests/e2e/test_callgraph_traps.py): its frames during allocation
 * resolve to nothing but `?? (librank_plugin.so+0x...)`. Four filters (four call paths)
 * share one helper, buffer_new: 4 x 1,000 blocks of 64 bytes. */
#include <stdlib.h>

struct rank_filters {
    void (*run[4])(int);
};

static long sink;

__attribute__((noinline, visibility("hidden"))) static void buffer_new(int v)
{
    char *p = malloc(64);
    p[0] = (char)v;
    sink += p[0];
    free(p);
}

__attribute__((noinline, visibility("hidden"))) static void smooth(int v) { buffer_new(v); }
__attribute__((noinline, visibility("hidden"))) static void sharpen(int v) { buffer_new(v + 1); }
__attribute__((noinline, visibility("hidden"))) static void blur(int v) { buffer_new(v + 2); }
__attribute__((noinline, visibility("hidden"))) static void edges(int v) { buffer_new(v + 3); }

void rank_plugin_register(struct rank_filters *f)
{
    f->run[0] = smooth;
    f->run[1] = sharpen;
    f->run[2] = blur;
    f->run[3] = edges;
}
