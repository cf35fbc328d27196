/*
 * stamps.c — the logs the compact side table's birth stamps are read with
 * (stamps.h): when each generation of the clock began, and when each epoch of a
 * table's allocation numbers began. Making a new generation is table.c's
 * (hsr_gen_advance): it turns the blocks of the generation four back old first.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "core/fast_clock.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "track/stamps.h"
#include "track/tracking.h"

uint64_t *hsr_gen_start;
_Atomic uint64_t hsr_gen;
unsigned hsr_gen_bits = HSR_STAMP_OFFSET_BITS, hsr_old_shift = HSR_STAMP_OFFSET_BITS - 21;

int hsr_stamps_init(void)
{
    const char *bits = getenv("HEAPSCOPE_TRACK_GENERATION_BITS");
    if (bits && *bits) {
        char *end;
        long b = strtol(bits, &end, 10);
        if (*end || b < 8 || b > HSR_STAMP_OFFSET_BITS)
            hsr_warn("HEAPSCOPE_TRACK_GENERATION_BITS must be 8..35, using 35");
        else
            hsr_gen_bits = (unsigned)b;
        hsr_old_shift = hsr_gen_bits > 21 ? hsr_gen_bits - 21 : 0;
    }
    hsr_gen_start = hsr_map(HSR_GENERATIONS * sizeof *hsr_gen_start); /* pages touched as used */
    if (!hsr_gen_start)
        return -1;
    hsr_gen_start[0] = hsr_clock_raw();
    atomic_store(&hsr_gen, 0);
    return 0;
}

static uint64_t epoch_clock(const struct hsr_track_thread *ts, uint64_t e)
{
    uint64_t *chunk =
        atomic_load_explicit(&ts->epoch_chunk[e / HSR_EPOCH_CHUNK], memory_order_acquire);
    return chunk[e % HSR_EPOCH_CHUNK];
}

int hsr_stamp_epoch_begun(struct hsr_track_thread *ts, uint64_t seq, uint64_t clock)
{
    uint64_t e = seq >> HSR_STAMP_SEQ_BITS;
    if (ts->epochs_lost || e >= (uint64_t)HSR_EPOCH_CHUNK * HSR_EPOCH_CHUNKS) {
        ts->epochs_lost = 1;
        return -1;
    }
    if (!e) /* epoch 0 begins at no clock: every block is after it */
        return 0;
    _Atomic(uint64_t *) *slot = &ts->epoch_chunk[e / HSR_EPOCH_CHUNK];
    uint64_t *chunk = atomic_load_explicit(slot, memory_order_relaxed);
    if (!chunk) {
        chunk = hsr_map(HSR_EPOCH_CHUNK * sizeof *chunk);
        if (!chunk) {
            ts->epochs_lost = 1;
            return -1;
        }
        atomic_fetch_add(&hsr_track_table_bytes, (int64_t)(HSR_EPOCH_CHUNK * sizeof *chunk));
        atomic_store_explicit(slot, chunk, memory_order_release);
    }
    chunk[e % HSR_EPOCH_CHUNK] = clock;
    atomic_store_explicit(&ts->epochs, e + 1, memory_order_release);
    return 0;
}

/* The last epoch begun before the block's clock interval ends; one earlier when that
 * epoch began inside the interval and the low bits say the block came just before. */
uint64_t hsr_stamp_seq(const struct hsr_track_thread *ts, uint64_t low, uint64_t born,
                       uint64_t span)
{
    uint64_t known = atomic_load_explicit(&ts->epochs, memory_order_acquire);
    uint64_t lo = 0, hi = known ? known - 1 : 0; /* epoch 0: every block is after it */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (epoch_clock(ts, mid) < born + span)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo && epoch_clock(ts, lo) >= born && low >= (1u << (HSR_STAMP_SEQ_BITS - 1)))
        lo--;
    return lo << HSR_STAMP_SEQ_BITS | low;
}
