/*
 * pool.c — pages of their own for the small sampled blocks, as sampling allocators
 * (GWP-ASan) give theirs: a block of s bytes gets ceil(s / page) fresh pages and
 * starts at the first, so its pages' state is its own (page j holds its bytes
 * [j * page, (j + 1) * page)). Nothing is protected, no guard page: the pages are
 * ordinary read-write memory.
 *
 * One reservation of address space (MAP_NORESERVE: memory only for the pages the
 * blocks touch), transparent huge pages off so that a touched page never brings its
 * neighbours in. It is cut into chunks of HSR_ACCESS_CHUNK_PAGES; slots are cut from
 * one chunk at a time, never reused while their chunk lives: a freed block's pages keep
 * its state until the watcher reads them (settle.c), and a chunk all of whose blocks
 * were read is made fresh again in one MADV_DONTNEED (one TLB shootdown for hundreds of
 * blocks, instead of one each) and taken again. A chunk that a long-lived block keeps
 * from draining has its read blocks' pages dropped in runs once they are many
 * (HSR_ACCESS_CHUNK_PAGES / 4), so they hold no memory. A side array (reserved too,
 * touched where slots are) maps a page to the record of the block on it: nothing is ever
 * written into a slot's own pages. Everything but the reservation runs under the lock.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "access/internal.h"
#include "core/pool.h"

enum { CHUNK_FREE, CHUNK_ACTIVE, CHUNK_FULL };

struct chunk {
    uint32_t cut;       /* pages cut into slots */
    uint32_t live;      /* slots whose block is not read yet */
    uint32_t dirty;     /* pages of read blocks still holding memory */
    uint32_t next_free; /* free chunks: the next one + 1 */
    uint8_t state;
};

uintptr_t hsr_pool_base;
uint64_t hsr_pool_span, hsr_pool_peak;
static uint32_t *page_record; /* per page of the pool: its block's record, 0 none */
static struct chunk *chunks;
static uint32_t nchunks, chunks_cut, free_chunks, active; /* free_chunks, active: id + 1 */
static uint64_t pages_in_use;

#define CHUNK_BYTES ((uintptr_t)HSR_ACCESS_CHUNK_PAGES * hsr_page_size)

static uint64_t pages_of(uint64_t size) { return (size + hsr_page_size - 1) / hsr_page_size; }
static uintptr_t chunk_base(uint32_t c) { return hsr_pool_base + (uintptr_t)c * CHUNK_BYTES; }

int hsr_pool_reserve(void)
{
    for (uint64_t bytes = HSR_ACCESS_POOL_BYTES; bytes >= HSR_ACCESS_POOL_MIN; bytes /= 2) {
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            continue; /* RLIMIT_AS, a small address space: try less */
        uint64_t pages = bytes / hsr_page_size,
                 n = bytes / (HSR_ACCESS_CHUNK_PAGES * hsr_page_size);
        page_record = hsr_map(pages * sizeof *page_record);
        chunks = hsr_map(n * sizeof *chunks);
        if (!page_record || !chunks || pages > UINT32_MAX - 1) {
            munmap(m, bytes);
            hsr_unmap(page_record, pages * sizeof *page_record);
            hsr_unmap(chunks, n * sizeof *chunks);
            page_record = NULL;
            chunks = NULL;
            continue;
        }
        madvise(m, bytes, MADV_NOHUGEPAGE);
        hsr_pool_base = (uintptr_t)m;
        hsr_pool_span = bytes;
        nchunks = (uint32_t)n;
        return 0;
    }
    return -1;
}

/* The active chunk is full: it drains once its blocks are read (hsr_pool_read). */
static void retire_active(void)
{
    if (active)
        chunks[active - 1].state = CHUNK_FULL;
    active = 0;
}

uintptr_t hsr_pool_take(uint64_t size)
{
    uint64_t n = pages_of(size);
    if (!hsr_pool_span || n == 0 || n > HSR_ACCESS_CHUNK_PAGES)
        return 0;
    if (active && chunks[active - 1].cut + n > HSR_ACCESS_CHUNK_PAGES)
        retire_active();
    if (!active) {
        uint32_t c;
        if (free_chunks) {
            c = free_chunks - 1;
            free_chunks = chunks[c].next_free;
        } else if (chunks_cut < nchunks) {
            c = chunks_cut++;
        } else {
            return 0; /* every chunk holds blocks not read yet */
        }
        chunks[c] = (struct chunk){.state = CHUNK_ACTIVE};
        active = c + 1;
    }
    struct chunk *ch = &chunks[active - 1];
    uintptr_t slot = chunk_base(active - 1) + (uintptr_t)ch->cut * hsr_page_size;
    ch->cut += (uint32_t)n;
    ch->live++;
    pages_in_use += n;
    if (pages_in_use * hsr_page_size > hsr_pool_peak)
        hsr_pool_peak = pages_in_use * hsr_page_size;
    return slot;
}

void hsr_pool_set_record(uintptr_t slot, uint64_t size, uint32_t rec)
{
    uint64_t first = (slot - hsr_pool_base) / hsr_page_size, n = pages_of(size);
    for (uint64_t i = 0; i < n; i++)
        page_record[first + i] = rec;
}

uint32_t hsr_pool_record(uintptr_t addr)
{
    if (addr - hsr_pool_base >= (uintptr_t)chunks_cut * CHUNK_BYTES)
        return 0;
    return page_record[(addr - hsr_pool_base) / hsr_page_size];
}

void hsr_pool_read(uintptr_t slot, uint64_t size, int dirty)
{
    struct chunk *ch = &chunks[(slot - hsr_pool_base) / CHUNK_BYTES];
    hsr_pool_set_record(slot, size, 0);
    pages_in_use -= pages_of(size);
    ch->live--;
    if (dirty)
        ch->dirty += (uint32_t)pages_of(size);
}

uint32_t hsr_pool_to_drop(uint32_t after, int *whole)
{
    for (uint32_t c = after; c < chunks_cut; c++) {
        const struct chunk *ch = &chunks[c];
        if (ch->state != CHUNK_FULL)
            continue;
        *whole = ch->live == 0;
        if (*whole || ch->dirty >= HSR_ACCESS_CHUNK_PAGES / 4)
            return c + 1;
    }
    return 0;
}

/* Outside the lock (system calls): the chunk's pages dropped. whole: every page (it
 * drained), else the runs no live block is on (a block read since may leave its
 * pages: they are counted again). */
void hsr_pool_drop(uint32_t id, int whole)
{
    uint32_t c = id - 1;
    uintptr_t base = chunk_base(c);
    uint32_t cut = chunks[c].cut;
    if (whole) {
        hsr_pages_drop(base, base + (uintptr_t)cut * hsr_page_size);
        return;
    }
    uint64_t first = (base - hsr_pool_base) / hsr_page_size;
    for (uint32_t p = 0; p < cut;) {
        while (p < cut && page_record[first + p])
            p++;
        uint32_t run = p;
        while (p < cut && !page_record[first + p])
            p++;
        hsr_pages_drop(base + (uintptr_t)run * hsr_page_size, base + (uintptr_t)p * hsr_page_size);
    }
}

/* With the lock, after hsr_pool_drop: a drained chunk is free again. */
void hsr_pool_dropped(uint32_t id, int whole)
{
    struct chunk *ch = &chunks[id - 1];
    if (!whole) {
        ch->dirty = 0;
        return;
    }
    *ch = (struct chunk){.state = CHUNK_FREE, .next_free = free_chunks};
    free_chunks = id;
}

uintptr_t hsr_pool_used_end(void) { return chunk_base(chunks_cut); }

/* The child keeps the pool (its blocks may still be freed there); its peak starts anew. */
void hsr_pool_after_fork_child(void) { hsr_pool_peak = pages_in_use * hsr_page_size; }
