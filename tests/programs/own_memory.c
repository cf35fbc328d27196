/* The recorder's own memory apart from the program's (tests/e2e/test_recorder_memory.py).
 * argv[1] = N: N blocks of 24 bytes stay live (touched), then the program prints its
 * own RSS and PSS (smaps_rollup, kB) with them all live, sleeps argv[2] ms (timeline
 * samples) and exits without freeing them (the exit snapshot's sample sees them too).
 * Output: "rss_kb <n>" and "pss_kb <n>". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long field_kb(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? atol(p + strlen(key)) : -1;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    long nap_ms = argc > 2 ? atol(argv[2]) : 300;
    char **blocks = malloc(n * sizeof *blocks);
    if (!blocks)
        return 1;
    for (size_t i = 0; i < n; i++) {
        blocks[i] = malloc(24);
        if (!blocks[i])
            return 1;
        memset(blocks[i], (int)i, 24);
    }
    char text[4096];
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[len] = 0;
    printf("rss_kb %ld\npss_kb %ld\n", field_kb(text, "Rss:"), field_kb(text, "Pss:"));
    fflush(stdout);
    struct timespec ts = {nap_ms / 1000, (nap_ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    return (int)(blocks[n / 2][0] & 0); /* the blocks stay live to the end */
}
