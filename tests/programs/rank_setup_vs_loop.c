/* Ranking trap: one-off set-up against repetition. 48-byte blocks: read_mesh() makes 40
 * nodes from one line in a loop; refine() makes six one-off pool objects from six lines,
 * then calls refine_facets() once, which makes 23 from one line in its loop over the
 * facets. refine() carries 29 blocks, refine_facets() 23, but six call sites allocating
 * once each are set-up: the repetition, and the fix target, is the facet loop. */
#include <stdio.h>
#include <stdlib.h>

#define OBJ 48
#define NODES 40
#define FACETS 23

static void *kept[NODES + 6 + FACETS];
static int nkept;

static void keep(void *p)
{
    ((char *)p)[0] = (char)nkept;
    kept[nkept++] = p;
}

__attribute__((noinline)) void read_mesh(void)
{
    for (int i = 0; i < NODES; i++)
        keep(malloc(OBJ));
}

__attribute__((noinline)) void refine_facets(void)
{
    for (int f = 0; f < FACETS; f++)
        keep(malloc(OBJ));
}

__attribute__((noinline)) void refine(void)
{
    keep(malloc(OBJ)); /* the refinement's pool objects, one each */
    keep(malloc(OBJ));
    keep(malloc(OBJ));
    keep(malloc(OBJ));
    keep(malloc(OBJ));
    keep(malloc(OBJ));
    refine_facets();
}

int main(void)
{
    read_mesh();
    refine();
    printf("%d blocks\n", nkept);
    for (int i = 0; i < nkept; i++)
        free(kept[i]);
    return 0;
}
