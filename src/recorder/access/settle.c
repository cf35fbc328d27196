/*
 * settle.c — the pool's blocks, read together and dropped together.
 *
 * A freed pool block is only marked RELEASED (blocks.c): nobody touches its pages
 * any more, so they keep its state. The watcher (and every snapshot) then reads the
 * whole pool in one scan: the live blocks' first touches and read-first pages, and the
 * released blocks' figures, which join their rows (DONE). The DONE blocks' pages are
 * then dropped outside the lock, neighbours' runs merged into one madvise each, and
 * their slots, fresh again, go back to the pool. So a sample costs the program's thread
 * no system call (only the first touch's page fault), and the drops' TLB shootdowns
 * come a run at a time instead of a block at a time.
 */
#include <string.h>

#include "access/internal.h"

uint32_t hsr_access_released;
static int dropping;                          /* a drop is under way (outside the lock) */
static uint32_t drop_list[HSR_ACCESS_SETTLE]; /* its records, by address */

/* A run of touched pages of the pool: each page's block learns it. */
static void pool_run(void *ctx, uintptr_t lo, uintptr_t hi, int zero, int huge)
{
    (void)ctx;
    for (uintptr_t a = lo; a < hi; a += hsr_page_size) {
        uint32_t id = hsr_pool_record(a);
        struct hsr_access_block *b = id ? &hsr_access_blocks[id] : NULL;
        if (!b || (b->state != HSR_BLOCK_LIVE && b->state != HSR_BLOCK_RELEASED))
            continue;
        uintptr_t end = b->start + b->size, to = a + hsr_page_size < end ? a + hsr_page_size : end;
        if (to > a)
            b->seen_bytes += to - a;
        b->seen |= (uint8_t)(1 | (zero ? 2 : 0));
        b->huge |= (uint8_t)huge;
    }
}

void hsr_access_settle_pool(uint64_t now)
{
    uint32_t used = hsr_access_blocks_used;
    int wanted = hsr_access_released > 0;
    for (uint32_t id = 1; id < used; id++) {
        struct hsr_access_block *b = &hsr_access_blocks[id];
        if (b->kind != HSR_IN_POOL ||
            (b->state != HSR_BLOCK_LIVE && b->state != HSR_BLOCK_RELEASED))
            continue;
        b->seen = 0;
        b->seen_bytes = 0;
        wanted |= b->state == HSR_BLOCK_LIVE;
    }
    if (!wanted)
        return;
    int ok = hsr_pages_touched(hsr_pool_base, hsr_pool_used_end(), NULL, pool_run) == 0;
    for (uint32_t id = 1; id < used; id++) {
        struct hsr_access_block *b = &hsr_access_blocks[id];
        if (b->kind != HSR_IN_POOL)
            continue;
        if (b->state == HSR_BLOCK_LIVE && ok) {
            hsr_access_seen(b, now, b->seen & 1, (b->seen & 2) != 0);
        } else if (b->state == HSR_BLOCK_RELEASED) {
            struct hsr_access_look look = {b->seen_bytes, b->seen & 1, (b->seen & 2) != 0, b->huge,
                                           ok};
            if (ok)
                hsr_access_seen(b, b->released_ns, look.touched, look.zero_page);
            hsr_access_finish(id, &look, b->released_ns);
            b->state = HSR_BLOCK_DONE;
            b->dirty = (uint8_t)(look.touched || !ok);
            hsr_access_released--;
        }
    }
}

static void sort_by_start(uint32_t *ids, uint32_t n)
{
    for (uint32_t gap = n / 2; gap; gap /= 2) /* Shell sort: no allocation, n <= 4096 */
        for (uint32_t i = gap; i < n; i++)
            for (uint32_t j = i; j >= gap && hsr_access_blocks[ids[j - gap]].start >
                                                 hsr_access_blocks[ids[j]].start;
                 j -= gap) {
                uint32_t t = ids[j];
                ids[j] = ids[j - gap];
                ids[j - gap] = t;
            }
}

void hsr_access_settle(uint64_t now, int drop)
{
    hsr_access_lock();
    hsr_access_settle_pool(now);
    if (!drop || dropping) {
        hsr_access_unlock();
        return;
    }
    uint32_t n = 0;
    for (uint32_t id = 1; id < hsr_access_blocks_used && n < HSR_ACCESS_SETTLE; id++)
        if (hsr_access_blocks[id].state == HSR_BLOCK_DONE) {
            hsr_access_blocks[id].state = HSR_BLOCK_DROPPING;
            drop_list[n++] = id;
        }
    dropping = n > 0;
    hsr_access_unlock();
    if (!n)
        return;
    sort_by_start(drop_list, n);
    uintptr_t run_lo = 0, run_hi = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct hsr_access_block *b = &hsr_access_blocks[drop_list[i]];
        if (!b->dirty)
            continue;
        if (b->lo != run_hi) { /* not adjacent: the run so far goes */
            hsr_pages_drop(run_lo, run_hi);
            run_lo = b->lo;
        }
        run_hi = b->hi;
    }
    hsr_pages_drop(run_lo, run_hi);
    hsr_access_lock();
    for (uint32_t i = 0; i < n; i++) {
        struct hsr_access_block *b = &hsr_access_blocks[drop_list[i]];
        hsr_pool_give(b->start, b->size);
        hsr_access_record_free(drop_list[i]);
    }
    dropping = 0;
    hsr_access_unlock();
}

/* A drop the fork cut short is the child's to finish. */
void hsr_access_settle_after_fork_child(void)
{
    dropping = 0;
    for (uint32_t id = 1; id < hsr_access_blocks_used; id++)
        if (hsr_access_blocks[id].state == HSR_BLOCK_DROPPING)
            hsr_access_blocks[id].state = HSR_BLOCK_DONE;
}
