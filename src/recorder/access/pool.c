/*
 * pool.c — pages of their own for the small sampled blocks, as sampling allocators
 * (GWP-ASan) give theirs: a block of s bytes gets ceil(s / page) fresh pages and
 * starts at the first, so its pages' state is its own (page j holds its bytes
 * [j * page, (j + 1) * page)). Nothing is protected, no guard page: the pages are
 * ordinary read-write memory.
 *
 * One reservation of address space (MAP_NORESERVE: memory only for the pages the
 * blocks touch), transparent huge pages off so that a touched page never brings its
 * neighbours in. Slots of 1 .. HSR_ACCESS_LARGE / page pages are cut from its start
 * and kept, once released, on a free list per length; a released slot's touched
 * pages are dropped first (MADV_DONTNEED, blocks.c) so that it is fresh again. Two side arrays (also
 * reserved, touched where slots are) map a page to the record of the block on it and
 * link the free slots: nothing is ever written into a slot's own pages.
 * Everything but the reservation runs under the access lock.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "access/internal.h"
#include "core/pool.h"

uintptr_t hsr_pool_base;
uint64_t hsr_pool_span, hsr_pool_peak;
static uint32_t *page_record; /* per page of the pool: its block's record, 0 none */
static uint32_t *next_free;   /* per slot's first page: the next free slot's page + 1 */
static uint32_t free_head[HSR_ACCESS_LARGE / 4096 + 1]; /* per length: first page + 1 */
static uint64_t pages_total, pages_cut, pages_in_use;

static uint64_t pages_of(uint64_t size) { return (size + hsr_page_size - 1) / hsr_page_size; }

int hsr_pool_reserve(void)
{
    for (uint64_t bytes = HSR_ACCESS_POOL_BYTES; bytes >= HSR_ACCESS_POOL_MIN; bytes /= 2) {
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            continue; /* RLIMIT_AS, a small address space: try less */
        uint64_t pages = bytes / hsr_page_size;
        page_record = hsr_map(pages * sizeof *page_record);
        next_free = hsr_map(pages * sizeof *next_free);
        if (!page_record || !next_free || pages > UINT32_MAX - 1) {
            munmap(m, bytes);
            hsr_unmap(page_record, pages * sizeof *page_record);
            hsr_unmap(next_free, pages * sizeof *next_free);
            page_record = next_free = NULL;
            continue;
        }
        madvise(m, bytes, MADV_NOHUGEPAGE);
        hsr_pool_base = (uintptr_t)m;
        hsr_pool_span = bytes;
        pages_total = pages;
        return 0;
    }
    return -1;
}

uintptr_t hsr_pool_take(uint64_t size)
{
    uint64_t n = pages_of(size);
    if (!hsr_pool_span || n == 0 || n >= sizeof free_head / sizeof *free_head)
        return 0;
    uint64_t page;
    if (free_head[n]) {
        page = free_head[n] - 1;
        free_head[n] = next_free[page];
    } else if (pages_cut + n <= pages_total) {
        page = pages_cut;
        pages_cut += n;
    } else {
        return 0;
    }
    pages_in_use += n;
    if (pages_in_use * hsr_page_size > hsr_pool_peak)
        hsr_pool_peak = pages_in_use * hsr_page_size;
    return hsr_pool_base + page * hsr_page_size;
}

void hsr_pool_set_record(uintptr_t slot, uint64_t size, uint32_t rec)
{
    uint64_t first = (slot - hsr_pool_base) / hsr_page_size, n = pages_of(size);
    for (uint64_t i = 0; i < n; i++)
        page_record[first + i] = rec;
}

uint32_t hsr_pool_record(uintptr_t addr)
{
    if (addr - hsr_pool_base >= pages_cut * hsr_page_size)
        return 0;
    return page_record[(addr - hsr_pool_base) / hsr_page_size];
}

/* Its touched pages already dropped (outside the lock: a system call). */
void hsr_pool_give(uintptr_t slot, uint64_t size)
{
    uint64_t n = pages_of(size), page = (slot - hsr_pool_base) / hsr_page_size;
    hsr_pool_set_record(slot, size, 0);
    next_free[page] = free_head[n];
    free_head[n] = (uint32_t)(page + 1);
    pages_in_use -= n;
}

uintptr_t hsr_pool_used_end(void) { return hsr_pool_base + pages_cut * hsr_page_size; }

/* The child keeps the pool (its blocks may still be freed there); its peak starts anew. */
void hsr_pool_after_fork_child(void) { hsr_pool_peak = pages_in_use * hsr_page_size; }
