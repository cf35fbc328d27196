/*
 * pages.c — which pages of a range the process has touched, from its own page tables
 * (/proc/self/pagemap, readable by any process for itself; the physical frame numbers
 * it hides from unprivileged readers are not needed).
 *
 * A private anonymous page that was never touched is not present. The first read of
 * it maps the kernel's shared zero page; the first write (by the program, or by the
 * kernel on its behalf: read(2), recv, process_vm_writev, an MPI library's copy)
 * gives it a page of its own. Two ways to tell those apart:
 *
 *   SCAN   the PAGEMAP_SCAN ioctl (Linux >= 6.7): one call returns the runs of
 *          present (or swapped) pages with PAGE_IS_PFNZERO on the zero page and
 *          PAGE_IS_HUGE on a transparent huge page;
 *   FLAGS  older kernels: one 64-bit entry per page, bit 63 present, 62 swapped,
 *          56 "exclusively mapped"; the zero page is present but never exclusive.
 *          After a fork the pages the parent wrote are shared copy-on-write, no longer
 *          exclusive either: for blocks alive at a fork, read-only is then not told
 *          from written (ACCESS.flags says so).
 *
 * The mechanism is probed once on two pages of our own; HEAPSCOPE_ACCESS_PAGES=
 * scan|pagemap forces one (tests of the older kernels' path).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/internal.h"
#include "core/lifecycle.h"
#include "core/proc_files.h"

/* linux/fs.h of Linux >= 6.7 (the build machine's headers may be older) */
#define HSR_PAGE_IS_PRESENT (1u << 3)
#define HSR_PAGE_IS_SWAPPED (1u << 4)
#define HSR_PAGE_IS_PFNZERO (1u << 5)
#define HSR_PAGE_IS_HUGE (1u << 6)
struct hsr_page_region {
    uint64_t start, end, categories;
};
struct hsr_pm_scan_arg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted,
        category_mask, category_anyof_mask, return_mask;
};
#define HSR_PAGEMAP_SCAN _IOWR('f', 16, struct hsr_pm_scan_arg)

#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)
#define PM_EXCLUSIVE (1ull << 56)

int hsr_pages_mechanism;
uintptr_t hsr_page_size = 4096;
/* Our descriptor on /proc/self/pagemap (core/proc_files.c: opened at the start and in a
 * fork child; the watcher thread never opens one), -1 if the program closed it. */
static int pagemap_fd(void) { return hsr_proc_file_fd(HSR_PROC_PAGEMAP); }

static int scan_runs(uintptr_t lo, uintptr_t hi, void *ctx, hsr_pages_fn fn)
{
    struct hsr_page_region vec[128];
    int fd = pagemap_fd();
    if (fd < 0)
        return -1;
    while (lo < hi) {
        struct hsr_pm_scan_arg a = {0};
        a.size = sizeof a;
        a.start = lo;
        a.end = hi;
        a.vec = (uintptr_t)vec;
        a.vec_len = sizeof vec / sizeof *vec;
        a.category_anyof_mask = HSR_PAGE_IS_PRESENT | HSR_PAGE_IS_SWAPPED;
        a.return_mask =
            HSR_PAGE_IS_PRESENT | HSR_PAGE_IS_SWAPPED | HSR_PAGE_IS_PFNZERO | HSR_PAGE_IS_HUGE;
        long n = ioctl(fd, HSR_PAGEMAP_SCAN, &a);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        for (long i = 0; i < n; i++)
            fn(ctx, vec[i].start, vec[i].end, (vec[i].categories & HSR_PAGE_IS_PFNZERO) != 0,
               (vec[i].categories & HSR_PAGE_IS_HUGE) != 0);
        if (a.walk_end <= lo)
            return -1;
        lo = a.walk_end;
    }
    return 0;
}

static int flag_runs(uintptr_t lo, uintptr_t hi, void *ctx, hsr_pages_fn fn)
{
    uint64_t e[512];
    int fd = pagemap_fd();
    if (fd < 0)
        return -1;
    uintptr_t run = 0;
    int run_zero = 0;
    while (lo < hi) {
        size_t pages = (hi - lo) / hsr_page_size;
        if (pages > sizeof e / sizeof *e)
            pages = sizeof e / sizeof *e;
        ssize_t got = pread(fd, e, pages * 8, (off_t)(lo / hsr_page_size * 8));
        if (got <= 0 || got % 8) {
            if (got < 0 && errno == EINTR)
                continue;
            return -1;
        }
        for (size_t i = 0; i < (size_t)got / 8; i++, lo += hsr_page_size) {
            int touched = (e[i] & (PM_PRESENT | PM_SWAPPED)) != 0;
            int zero = (e[i] & PM_PRESENT) && !(e[i] & PM_EXCLUSIVE);
            if (run && (!touched || zero != run_zero)) {
                fn(ctx, run, lo, run_zero, 0);
                run = 0;
            }
            if (touched && !run) {
                run = lo;
                run_zero = zero;
            }
        }
    }
    if (run)
        fn(ctx, run, lo, run_zero, 0);
    return 0;
}

int hsr_pages_touched(uintptr_t lo, uintptr_t hi, void *ctx, hsr_pages_fn fn)
{
    if (lo >= hi)
        return 0;
    if (hsr_pages_mechanism == HS_ACCESS_PAGEMAP_SCAN)
        return scan_runs(lo, hi, ctx, fn);
    if (hsr_pages_mechanism == HS_ACCESS_PAGEMAP)
        return flag_runs(lo, hi, ctx, fn);
    return -1;
}

int hsr_pages_drop(uintptr_t lo, uintptr_t hi)
{
    return lo < hi ? madvise((void *)lo, hi - lo, MADV_DONTNEED) : 0;
}

/* ---- the probe ---- */

struct probe {
    uintptr_t base;
    int present[2], zero[2];
};

static void probe_run(void *ctx, uintptr_t lo, uintptr_t hi, int zero, int huge)
{
    (void)huge;
    struct probe *p = ctx;
    for (uintptr_t a = lo; a < hi; a += hsr_page_size) {
        size_t i = (a - p->base) / hsr_page_size;
        if (i < 2) {
            p->present[i] = 1;
            p->zero[i] = zero;
        }
    }
}

/* Page 0 read, page 1 written: the mechanism must see exactly that. */
static int probe(int mechanism)
{
    char *m =
        mmap(NULL, 3 * hsr_page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 0;
    madvise(m, 3 * hsr_page_size, MADV_NOHUGEPAGE);
    *(volatile char *)m;
    m[hsr_page_size] = 1;
    struct probe p = {(uintptr_t)m, {0, 0}, {0, 0}};
    hsr_pages_mechanism = mechanism;
    int rc = hsr_pages_touched((uintptr_t)m, (uintptr_t)m + 3 * hsr_page_size, &p, probe_run);
    hsr_pages_mechanism = HS_ACCESS_NONE;
    munmap(m, 3 * hsr_page_size);
    return rc == 0 && p.present[0] && p.zero[0] && p.present[1] && !p.zero[1];
}

int hsr_pages_init(const char *forced)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page > 0)
        hsr_page_size = (uintptr_t)page;
    if (pagemap_fd() < 0) {
        char msg[300];
        snprintf(msg, sizeof msg,
                 "--access: /proc/self/pagemap cannot be read (%s): the sampled blocks are "
                 "counted, their pages not measured",
                 strerror(errno));
        hsr_warn(msg);
        return hsr_pages_mechanism = HS_ACCESS_NONE;
    }
    int want_scan = !forced || strcmp(forced, "pagemap") != 0;
    if (want_scan && probe(HS_ACCESS_PAGEMAP_SCAN))
        return hsr_pages_mechanism = HS_ACCESS_PAGEMAP_SCAN;
    if (probe(HS_ACCESS_PAGEMAP))
        return hsr_pages_mechanism = HS_ACCESS_PAGEMAP;
    hsr_warn("--access: the page tables (/proc/self/pagemap) do not tell the zero page from a "
             "written one here: the sampled blocks are counted, their pages not measured");
    return hsr_pages_mechanism = HS_ACCESS_NONE;
}

/* The parent's descriptor names the parent's pages: the child's own is opened by
 * core/proc_files.c before this runs. */
void hsr_pages_after_fork_child(void)
{
    if (hsr_pages_mechanism != HS_ACCESS_NONE && pagemap_fd() < 0)
        hsr_pages_mechanism = HS_ACCESS_NONE;
}
