/*
 * smaps.c — the process's resident and proportional set size, read from /proc.
 *
 *   hsr_read_memory   RSS and PSS from /proc/self/smaps_rollup ("Rss:" and "Pss:"
 *                    lines, kB). The kernel walks the page tables for it: about
 *                    20-50 us. Kernels before 4.14 have no smaps_rollup: RSS then
 *                    comes from /proc/self/statm and PSS is -1 (unknown).
 *   hsr_read_rss      RSS only, from /proc/self/statm (the kernel's counters, no page
 *                    walk: about 4 us). PSS -1.
 *
 * pread on the recorder's own descriptors (core/proc_files.c: an open() here could
 * take a descriptor the program is about to dup2 onto) into a caller's stack buffer,
 * and a hand-written parser: no malloc, no stdio, no lock, so any thread and a
 * signal handler may call them.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "core/proc_files.h"
#include "timeline/timeline.h"

/* The number after "<key>" at the start of a line of text, or -1. */
static int64_t field_kb(const char *text, const char *key)
{
    for (const char *line = text; *line;) {
        const char *k = key, *p = line;
        while (*k && *p == *k)
            k++, p++;
        if (!*k) {
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p < '0' || *p > '9')
                return -1;
            int64_t v = 0;
            while (*p >= '0' && *p <= '9')
                v = v * 10 + (*p++ - '0');
            return v;
        }
        while (*line && *line != '\n')
            line++;
        if (*line)
            line++;
    }
    return -1;
}

int hsr_read_rss(int64_t *rss)
{
    char buf[256];
    *rss = -1;
    if (hsr_proc_file_read(HSR_PROC_STATM, buf, sizeof buf) < 0)
        return -1;
    /* "size resident shared text lib data dt", in pages */
    const char *p = buf;
    while (*p >= '0' && *p <= '9')
        p++;
    if (*p++ != ' ' || *p < '0' || *p > '9')
        return -1;
    int64_t pages = 0;
    while (*p >= '0' && *p <= '9')
        pages = pages * 10 + (*p++ - '0');
    *rss = pages * (int64_t)sysconf(_SC_PAGESIZE);
    return 0;
}

int hsr_read_memory(int64_t *rss, int64_t *pss)
{
    char buf[2048]; /* smaps_rollup is about 900 bytes */
    *pss = -1;
    if (hsr_proc_file_read(HSR_PROC_SMAPS_ROLLUP, buf, sizeof buf) < 0)
        return hsr_read_rss(rss);
    int64_t r = field_kb(buf, "Rss:"), p = field_kb(buf, "Pss:");
    if (r < 0)
        return hsr_read_rss(rss);
    *rss = r * 1024;
    *pss = p < 0 ? -1 : p * 1024;
    return 0;
}
