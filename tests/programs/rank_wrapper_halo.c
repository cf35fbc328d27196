/* Ranking trap: a one-line allocation wrapper, static void *app_alloc(size_t s), through
 * which exchange() takes four 512-byte halo buffers (four lines) in every call and frees
 * them, 200 calls from the time loop: 800 blocks; setup_mesh() takes 60 more blocks of
 * 512 bytes through it, from one line in a loop. The wrapper is the allocator from the
 * user's point of view: exchange() is the first fix target (keep the buffers from one
 * call to the next), app_alloc a wrapper, never ranked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HALO 512
#define STEPS 200
#define MESH_BLOCKS 60

static void *app_alloc(size_t s) { return malloc(s); }

static char *mesh[MESH_BLOCKS];
static long checksum;

__attribute__((noinline)) void setup_mesh(void)
{
    for (int i = 0; i < MESH_BLOCKS; i++) {
        mesh[i] = app_alloc(HALO);
        memset(mesh[i], i, HALO);
    }
}

__attribute__((noinline)) void exchange(int step)
{
    char *send_left = app_alloc(HALO);
    char *send_right = app_alloc(HALO);
    char *recv_left = app_alloc(HALO);
    char *recv_right = app_alloc(HALO);
    memcpy(send_left, mesh[0], HALO);
    memcpy(send_right, mesh[MESH_BLOCKS - 1], HALO);
    memcpy(recv_left, send_right, HALO);
    memcpy(recv_right, send_left, HALO);
    checksum += recv_left[step % HALO] + recv_right[(step + 1) % HALO];
    free(send_left);
    free(send_right);
    free(recv_left);
    free(recv_right);
}

__attribute__((noinline)) void time_loop(void)
{
    for (int step = 0; step < STEPS; step++)
        exchange(step);
}

__attribute__((noinline)) void run(void)
{
    setup_mesh();
    time_loop();
}

int main(void)
{
    run();
    for (int i = 0; i < MESH_BLOCKS; i++)
        free(mesh[i]);
    printf("%ld\n", checksum);
    return 0;
}
