/* Deep stacks through many call sites, for the unwind cache
 * (tests/e2e/test_unwind_cache.py); built as Debian builds its packages (-O2, no
 * frame pointers) or with frame pointers. 32 levels of four variants each:
 * level<n>_<v> calls level <n+1> in its variant picked by the next two bits of the
 * path, through a table (one call site per function: the symbolized frames tell
 * the paths apart), so the runs pass through about 130 return addresses at depths
 * 5 to 33. Level 5 keeps a variable-length array, so its CFA is found from rbp
 * even without frame pointers.
 *
 * Path p (0..255) goes down 4 + p % 28 levels (level<d>_0 with d = 4 + p % 28
 * calls leaf) and allocates 16 + 8 * (p % 4) bytes: the frames are leaf, then
 * level<k>_<(p >> 2k) & 3> for k = d down to 0, then rounds and main. 256 stacks, each
 * allocated ROUNDS (40) times. With the argument "tramp", every allocation is made
 * through tramp, a function without call frame information (written in assembly
 * without CFI directives), which libunwind can only pass by guessing from rbp;
 * with "tramp-then-direct", the 10,240 allocations through tramp come first, then
 * the 10,240 without it (512 stacks of 40 allocations). */
#include <stdlib.h>
#include <string.h>

#define ROUNDS 40

typedef void level_fn(unsigned path, int depth, size_t size);

void *volatile sink;
volatile int mark[4];

__attribute__((noinline)) void leaf(size_t size)
{
    sink = malloc(size);
    free(sink);
    mark[0]++;
}

__attribute__((noipa)) void scribble(char *buf, int n) { memset(buf, n, (size_t)n); }

/* Level n, variant v: the next level's variant from the path's next two bits (a
 * store after the call stops it from being a tail call). Level 5 has a frame of
 * variable size: CFA = rbp + 16 even at -O2 -fomit-frame-pointer. */
#define VARIANT(n, v, next)                                                                        \
    __attribute__((noinline)) void level##n##_##v(unsigned path, int depth, size_t size)           \
    {                                                                                              \
        if (depth == 0) {                                                                          \
            leaf(size);                                                                            \
            mark[v]++;                                                                             \
            return;                                                                                \
        }                                                                                          \
        if (n == 5) {                                                                              \
            char scratch[depth + 8];                                                               \
            scribble(scratch, depth + 8);                                                          \
            next[path & 3](path >> 2, depth - 1, size);                                            \
            mark[v] = scratch[depth];                                                              \
        } else {                                                                                   \
            next[path & 3](path >> 2, depth - 1, size);                                            \
            mark[v] = n;                                                                           \
        }                                                                                          \
    }
#define LEVEL(n, next)                                                                             \
    VARIANT(n, 0, next)                                                                            \
    VARIANT(n, 1, next)                                                                            \
    VARIANT(n, 2, next)                                                                            \
    VARIANT(n, 3, next)                                                                            \
    static level_fn *const level##n[4] = {level##n##_0, level##n##_1, level##n##_2, level##n##_3};

static void beyond(unsigned path, int depth, size_t size)
{
    (void)path;
    (void)depth;
    leaf(size);
}
static level_fn *const level32[4] = {beyond, beyond, beyond, beyond};

LEVEL(31, level32)
LEVEL(30, level31)
LEVEL(29, level30)
LEVEL(28, level29)
LEVEL(27, level28)
LEVEL(26, level27)
LEVEL(25, level26)
LEVEL(24, level25)
LEVEL(23, level24)
LEVEL(22, level23)
LEVEL(21, level22)
LEVEL(20, level21)
LEVEL(19, level20)
LEVEL(18, level19)
LEVEL(17, level18)
LEVEL(16, level17)
LEVEL(15, level16)
LEVEL(14, level15)
LEVEL(13, level14)
LEVEL(12, level13)
LEVEL(11, level12)
LEVEL(10, level11)
LEVEL(9, level10)
LEVEL(8, level9)
LEVEL(7, level8)
LEVEL(6, level7)
LEVEL(5, level6)
LEVEL(4, level5)
LEVEL(3, level4)
LEVEL(2, level3)
LEVEL(1, level2)
LEVEL(0, level1)

/* tramp(fn, path, depth, size): calls fn(path, depth, size) with a frame-pointer
 * frame and no FDE. */
void tramp(level_fn *fn, unsigned path, int depth, size_t size);
__asm__(".text\n"
        ".globl tramp\n"
        ".type tramp, @function\n"
        "tramp:\n"
        "  push %rbp\n"
        "  mov %rsp, %rbp\n"
        "  mov %rdi, %rax\n"
        "  mov %esi, %edi\n"
        "  mov %edx, %esi\n"
        "  mov %rcx, %rdx\n"
        "  call *%rax\n"
        "  pop %rbp\n"
        "  ret\n"
        ".size tramp, .-tramp\n");

__attribute__((noinline)) static void rounds(int through_tramp)
{
    for (int round = 0; round < ROUNDS; round++)
        for (unsigned p = 0; p < 256; p++) {
            int depth = 4 + (int)(p % 28);
            size_t size = 16 + 8 * (p % 4);
            if (through_tramp)
                tramp(level0[p & 3], p >> 2, depth, size);
            else
                level0[p & 3](p >> 2, depth, size);
        }
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "direct";
    if (strcmp(how, "direct") != 0)
        rounds(1);
    if (strcmp(how, "tramp") != 0)
        rounds(0);
    return 0;
}
