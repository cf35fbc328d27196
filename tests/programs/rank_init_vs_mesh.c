/* Ranking trap: many rare paths against one hot routine. 32-byte blocks come along 121
 * stack trace types: 120 rare ones through initialize_comm() (30 init_part functions,
 * each calling init_fields, which calls register_item from 4 call sites; 8 blocks per
 * call: 960 blocks, 5.7%) and
 * one through timestep() -> mesh_refine() (16,000 blocks, 94.3%). A fix in mesh_refine
 * removes 94.3% of the allocations: it is the first fix target, not initialize_comm
 * (most paths) nor register_item. */
#include <stdio.h>
#include <stdlib.h>

#define RARE_PARTS 30
#define PER_CALL 8
#define MESH_BLOCKS 16000

static void *kept[RARE_PARTS * 4 * PER_CALL];
static int nkept;
static long sink;

__attribute__((noinline)) void register_item(int tag)
{
    for (int i = 0; i < PER_CALL; i++) {
        kept[nkept] = malloc(32);
        ((char *)kept[nkept])[0] = (char)tag;
        nkept++;
    }
}

__attribute__((noinline)) void init_fields(int k)
{
    register_item(k);       /* four call sites: four paths per caller */
    register_item(k + 1);
    register_item(k + 2);
    register_item(k + 3);
}

#define PART(k) \
    __attribute__((noinline)) void init_part_##k(void) { init_fields(k); }
PART(0) PART(1) PART(2) PART(3) PART(4) PART(5) PART(6) PART(7) PART(8) PART(9)
PART(10) PART(11) PART(12) PART(13) PART(14) PART(15) PART(16) PART(17) PART(18) PART(19)
PART(20) PART(21) PART(22) PART(23) PART(24) PART(25) PART(26) PART(27) PART(28) PART(29)

__attribute__((noinline)) void initialize_comm(void)
{
    init_part_0(); init_part_1(); init_part_2(); init_part_3(); init_part_4();
    init_part_5(); init_part_6(); init_part_7(); init_part_8(); init_part_9();
    init_part_10(); init_part_11(); init_part_12(); init_part_13(); init_part_14();
    init_part_15(); init_part_16(); init_part_17(); init_part_18(); init_part_19();
    init_part_20(); init_part_21(); init_part_22(); init_part_23(); init_part_24();
    init_part_25(); init_part_26(); init_part_27(); init_part_28(); init_part_29();
}

__attribute__((noinline)) void mesh_refine(int cell)
{
    char *edge = malloc(32);   /* a temporary per cell: the anomaly */
    edge[0] = (char)cell;
    sink += edge[0];
    free(edge);
}

__attribute__((noinline)) void timestep(void)
{
    for (int c = 0; c < MESH_BLOCKS; c++)
        mesh_refine(c);
}

int main(void)
{
    initialize_comm();
    timestep();
    for (int i = 0; i < nkept; i++)
        free(kept[i]);
    printf("%ld %d\n", sink, nkept);
    return 0;
}
