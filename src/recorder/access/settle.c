/*
 * settle.c — the pool's blocks, read together and dropped together.
 *
 * A freed pool block is only marked RELEASED (blocks.c): nobody touches its pages any
 * more, and its slot is not reused while its chunk lives (pool.c), so they keep its
 * state. The watcher (and every snapshot) then reads the whole pool in one scan: the
 * live blocks' first touches and read-first pages, and the released blocks' figures,
 * which join their rows. A chunk whose blocks were all read is then made fresh in one
 * madvise, outside the lock. So a sample costs the program's thread no system call
 * (only the first touch's page fault), and the drops' TLB shootdowns come a chunk of
 * hundreds of blocks at a time.
 */
#include <string.h>

#include "access/internal.h"

uint32_t hsr_access_released;
static _Atomic int dropping; /* one drop at a time (outside the lock) */

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
        if (b->state == HSR_BLOCK_LIVE && ok && b->born_ns <= now) {
            hsr_access_seen(b, now, b->seen & 1, (b->seen & 2) != 0);
        } else if (b->state == HSR_BLOCK_RELEASED) {
            struct hsr_access_look look = {b->seen_bytes, b->seen & 1, (b->seen & 2) != 0, b->huge,
                                           ok};
            if (ok)
                hsr_access_seen(b, b->released_ns, look.touched, look.zero_page);
            hsr_access_finish(id, &look, b->released_ns);
            hsr_pool_read(b->start, b->size, look.touched || !ok);
            hsr_access_record_free(id);
            hsr_access_released--;
        }
    }
}

void hsr_access_settle(uint64_t now, int drop)
{
    hsr_access_lock();
    hsr_access_settle_pool(now);
    if (!drop || atomic_exchange(&dropping, 1)) {
        hsr_access_unlock();
        return;
    }
    /* at most a few chunks a look, each dropped outside the lock: their slots are no
     * block's, and no block is cut from a chunk that is not active */
    for (uint32_t at = 0, n = 0; n < 16; n++) {
        int whole;
        uint32_t id = hsr_pool_to_drop(at, &whole);
        if (!id)
            break;
        hsr_access_unlock();
        hsr_pool_drop(id, whole);
        hsr_access_lock();
        hsr_pool_dropped(id, whole);
        at = id;
    }
    atomic_store(&dropping, 0);
    hsr_access_unlock();
}
