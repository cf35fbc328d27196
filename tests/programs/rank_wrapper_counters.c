/* Ranking trap: an allocation wrapper with a NULL check, counters and a name argument,
 * app_malloc(size_t n, const char *what), used by three lines inside the loops of
 * allocate() for the rows of three tables (80-byte rows: 3,000 cells, 2,000 faces, 1,000
 * nodes) and by read_input() for one 80-byte header: 6,001 blocks of 80 bytes along four
 * paths. The wrapper passes each call to one malloc: from the user's point of view it is
 * part of the allocator. Where the rows are decided is allocate() (one block per table
 * would do): it is the first fix target, app_malloc a wrapper, never ranked. */
#include <stdio.h>
#include <stdlib.h>

#define ROW 80
#define CELLS 3000
#define FACES 2000
#define NODES 1000

static size_t allocated_bytes, allocated_blocks;
static char *cells[CELLS], *faces[FACES], *nodes[NODES], *header;

__attribute__((noinline)) void *app_malloc(size_t n, const char *what)
{
    void *p = malloc(n);
    if (p == NULL) {
        fprintf(stderr, "out of memory: %zu bytes for %s\n", n, what);
        exit(1);
    }
    allocated_bytes += n;
    allocated_blocks++;
    return p;
}

__attribute__((noinline)) void read_input(void)
{
    header = app_malloc(ROW, "header");
    header[0] = 1;
}

__attribute__((noinline)) void allocate(void)
{
    for (int i = 0; i < CELLS; i++)
        cells[i] = app_malloc(ROW, "cell row");
    for (int i = 0; i < FACES; i++)
        faces[i] = app_malloc(ROW, "face row");
    for (int i = 0; i < NODES; i++)
        nodes[i] = app_malloc(ROW, "node row");
}

int main(void)
{
    read_input();
    allocate();
    printf("%zu blocks, %zu bytes\n", allocated_blocks, allocated_bytes);
    for (int i = 0; i < CELLS; i++)
        free(cells[i]);
    for (int i = 0; i < FACES; i++)
        free(faces[i]);
    for (int i = 0; i < NODES; i++)
        free(nodes[i]);
    free(header);
    return 0;
}
