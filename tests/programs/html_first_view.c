// The HTML page's first view (tests/browser/test_html_first_view.py): blocks of four
// sizes along two call paths, counts chosen so that sorting by size and by count
// differ. alloc_block <- make_cells allocates 96 B x500, 24 B x300 and 48 B x50 (one
// path, three sizes); alloc_block <- make_vectors 96 B x200 and 4000 B x400. Per size:
// 96 B 700 (the busiest), 4000 B 400, 24 B 300, 48 B 50. Every block is kept (freed at
// the end), so no size is reused by the C library in between.
#include <stdlib.h>

#define MAX_BLOCKS 2000
static void *blocks[MAX_BLOCKS];
static int kept;

__attribute__((noinline)) void *alloc_block(size_t n) {
    void *p = malloc(n);
    blocks[kept++] = p;
    return p;
}

__attribute__((noinline)) void make_cells(void) {
    for (int i = 0; i < 500; i++)
        alloc_block(96);
    for (int i = 0; i < 300; i++)
        alloc_block(24);
    for (int i = 0; i < 50; i++)
        alloc_block(48);
}

__attribute__((noinline)) void make_vectors(void) {
    for (int i = 0; i < 200; i++)
        alloc_block(96);
    for (int i = 0; i < 400; i++)
        alloc_block(4000);
}

int main(void) {
    make_cells();
    make_vectors();
    for (int i = 0; i < kept; i++)
        free(blocks[i]);
    return 0;
}
