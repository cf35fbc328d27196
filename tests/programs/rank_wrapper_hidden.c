/* Ranking trap: an allocation wrapper whose name does not say it, get_buffer(size_t n)
 * (a NULL check and a counter, like xmem_get or ws_take), used by two lines inside the
 * loops of assemble() (64-byte buffers: 3,000 for the cells, 2,000 for the faces) and by
 * read_mesh() for one: 5,001 blocks of 64 bytes along three paths. Its code is a few
 * dozen instructions without a loop, entered from three call sites: a wrapper. Where the
 * buffers are decided is assemble(): the first fix target. Kept out of line (noinline),
 * as a wrapper in another file or library is, so that -O2 keeps its frame. */
#include <stdio.h>
#include <stdlib.h>

#define BUF 64
#define CELLS 3000
#define FACES 2000

static size_t handed_out;
static char *cells[CELLS], *faces[FACES], *mesh;

__attribute__((noinline)) void *get_buffer(size_t n)
{
    void *p = malloc(n);
    if (p == NULL) {
        fprintf(stderr, "no memory for a %zu-byte buffer\n", n);
        exit(1);
    }
    handed_out++;
    return p;
}

__attribute__((noinline)) void read_mesh(void)
{
    mesh = get_buffer(BUF);
    mesh[0] = 1;
}

__attribute__((noinline)) void assemble(void)
{
    for (int i = 0; i < CELLS; i++)
        cells[i] = get_buffer(BUF);
    for (int i = 0; i < FACES; i++)
        faces[i] = get_buffer(BUF);
}

int main(void)
{
    read_mesh();
    assemble();
    printf("%zu buffers\n", handed_out);
    for (int i = 0; i < CELLS; i++)
        free(cells[i]);
    for (int i = 0; i < FACES; i++)
        free(faces[i]);
    free(mesh);
    return 0;
}
