/*
 * own_memory.c — the recorder's own resident memory, measured apart from the program's.
 *
 * Everything the recorder keeps (counters, stack and tracking tables, the timeline's
 * ring, write buffers, thread records, the sampler's stack) comes from hsr_map
 * (core/pool.c), which lists each mapping here; so do the writable segments of
 * libheapscope.so itself (.data, .bss). The resident part of those ranges is the
 * recorder's share of the process's RSS, read with mincore(2): one byte per page, no
 * page-table walk of the rest of the process (smaps_rollup walks all of it).
 *
 * What it is not: the code pages of libheapscope.so and of the libraries only it
 * loads (libunwind, libzstd: file-backed, shared between processes, about 1-2 MB
 * resident) stay in the program's figures, and the recorder's thread-local variables
 * are in the threads' stacks. Its pages are private, so its PSS is its RSS, except in
 * a fork child until either side writes them (shared copy-on-write: their PSS is half).
 * mincore counts a page the recorder has only read (the kernel's shared zero page) as
 * resident, which the RSS does not: the recorder writes what it maps, tables are
 * probed after they are filled.
 *
 * Cost: a mapping is split into at most 48 granules of 2 MB or more; a granule found
 * wholly resident is remembered and not read again by the cheap samples (region
 * boundaries, MPI calipers), only by the sampler's periodic ones (`fresh`), which
 * also see pages given back (a fork child's cleared stack tables). So a cheap sample
 * reads the granules still filling: a few us.
 *
 * The list: a fixed table of entries claimed and released with compare-and-swap, each
 * with a sequence number that is odd while it changes (a reader that sees it change
 * skips the entry for that sample): no lock, so any thread and a signal handler may
 * map, unmap and measure. Past HSR_OWN_MAPS live mappings the rest are not measured.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include "timeline/own_memory.h"

#define GRANULES 48            /* per mapping: a 48-bit mask, 16 bits of tag */
#define GRANULE_MIN (2u << 20) /* bytes */
#define MASK ((1ull << GRANULES) - 1)

struct own_map {
    _Atomic uint32_t seq;    /* odd while the entry changes */
    _Atomic uintptr_t start; /* 0: free; 1: being claimed or released */
    _Atomic size_t bytes;
    _Atomic uint64_t full; /* seq << 48 (the tag) | granules found wholly resident */
};

static struct own_map *_Atomic table;
static _Atomic uint32_t used; /* entries ever claimed: a scan stops there */
static size_t page;

static struct own_map *entries(void)
{
    struct own_map *t = atomic_load_explicit(&table, memory_order_acquire);
    if (t)
        return t;
    size_t bytes = (size_t)HSR_OWN_MAPS * sizeof *t;
    t = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
             0);
    if (t == MAP_FAILED)
        return NULL;
    struct own_map *none = NULL;
    if (!atomic_compare_exchange_strong(&table, &none, t)) {
        munmap(t, bytes);
        return none;
    }
    hsr_own_add(t, bytes); /* the list is the recorder's memory too */
    return t;
}

static void set(struct own_map *e, size_t bytes)
{
    uint32_t seq = atomic_fetch_add(&e->seq, 1) + 1; /* odd */
    atomic_store(&e->bytes, bytes);
    atomic_store(&e->full, (uint64_t)(seq + 1) << GRANULES);
    atomic_store(&e->seq, seq + 1);
}

void hsr_own_add(void *start, size_t bytes)
{
    struct own_map *t = entries();
    if (!t || !start || !bytes)
        return;
    for (uint32_t i = 0; i < HSR_OWN_MAPS; i++) {
        uintptr_t free_ = 0;
        if (atomic_load_explicit(&t[i].start, memory_order_relaxed) != 0 ||
            !atomic_compare_exchange_strong(&t[i].start, &free_, 1))
            continue;
        set(&t[i], bytes);
        atomic_store_explicit(&t[i].start, (uintptr_t)start, memory_order_release);
        uint32_t n = atomic_load(&used);
        while (n < i + 1 && !atomic_compare_exchange_weak(&used, &n, i + 1))
            ;
        return;
    }
}

void hsr_own_remove(void *start, size_t bytes)
{
    (void)bytes;
    struct own_map *t = atomic_load_explicit(&table, memory_order_acquire);
    uint32_t n = atomic_load(&used);
    for (uint32_t i = 0; t && start && i < n; i++) {
        uintptr_t was = (uintptr_t)start;
        if (atomic_load_explicit(&t[i].start, memory_order_relaxed) != was ||
            !atomic_compare_exchange_strong(&t[i].start, &was, 1))
            continue;
        set(&t[i], 0);
        atomic_store_explicit(&t[i].start, 0, memory_order_release);
        return;
    }
}

/* Resident pages of [p, p + pages) (0 for what is not mapped any more). */
static size_t resident_pages(uintptr_t p, size_t pages)
{
    unsigned char vec[4096];
    size_t n = 0;
    for (size_t done = 0; done < pages;) {
        size_t k = pages - done < sizeof vec ? pages - done : sizeof vec;
        if (mincore((void *)(p + done * page), k * page, vec) == 0)
            for (size_t i = 0; i < k; i++)
                n += vec[i] & 1;
        done += k;
    }
    return n;
}

/* One entry's resident bytes; remembers its wholly resident granules. */
static int64_t entry_resident(struct own_map *e, int fresh)
{
    uint32_t seq = atomic_load_explicit(&e->seq, memory_order_acquire);
    if (seq & 1)
        return 0;
    uintptr_t start = atomic_load_explicit(&e->start, memory_order_acquire);
    size_t bytes = atomic_load_explicit(&e->bytes, memory_order_relaxed);
    uint64_t full = atomic_load_explicit(&e->full, memory_order_relaxed);
    if (start <= 1 || !bytes || atomic_load_explicit(&e->seq, memory_order_acquire) != seq)
        return 0;
    size_t pages = (bytes + page - 1) / page;
    size_t per = GRANULE_MIN / page, need = (pages + GRANULES - 1) / GRANULES;
    if (per < need)
        per = need;
    uint64_t mask = 0;
    size_t n = 0;
    for (size_t g = 0, at = 0; at < pages; g++, at += per) {
        size_t k = pages - at < per ? pages - at : per, r;
        if (!fresh && (full >> g & 1))
            r = k;
        else
            r = resident_pages(start + at * page, k);
        n += r;
        if (r == k)
            mask |= 1ull << g;
    }
    uint64_t now = (full & ~MASK) | mask;
    if (now != full)
        atomic_compare_exchange_strong(&e->full, &full, now);
    return (int64_t)(n * page);
}

/* libheapscope.so's writable PT_LOAD segments (relocated data, .data, .bss), once. */
static int add_segments(struct dl_phdr_info *info, size_t size, void *ours)
{
    (void)size;
    int mine = 0;
    for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        mine = ph->p_type == PT_LOAD && (uintptr_t)ours >= lo && (uintptr_t)ours < lo + ph->p_memsz;
    }
    for (int i = 0; i < info->dlpi_phnum && mine; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
            continue;
        uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)(page - 1);
        uintptr_t hi =
            (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page - 1) & ~(uintptr_t)(page - 1);
        hsr_own_add((void *)lo, hi - lo);
    }
    return mine;
}

static _Atomic int started;

void hsr_own_start(void)
{
    long p = sysconf(_SC_PAGESIZE);
    page = p > 0 ? (size_t)p : 4096;
    if (!atomic_exchange(&started, 1))
        dl_iterate_phdr(add_segments, (void *)&started);
}

int64_t hsr_own_resident(int fresh)
{
    struct own_map *t = atomic_load_explicit(&table, memory_order_acquire);
    if (!t || !atomic_load_explicit(&started, memory_order_relaxed))
        return -1;
    int64_t n = 0;
    uint32_t count = atomic_load(&used);
    for (uint32_t i = 0; i < count; i++)
        n += entry_resident(&t[i], fresh);
    return n;
}
