/*
 * stamps.h — a block's birth stamp in the compact side table (table.h): its birth
 * clock and its allocating table's allocation number, packed in 58 bits, and back.
 *
 * The clock, 38 bits. A young block (born in one of the last four generations)
 * keeps its raw clock exactly: its generation's parity (2 bits) and its offset in
 * that generation (35 bits). A generation begins when a birth finds the current one
 * 2^35 raw units old (about 11 s of a 3 GHz time-stamp counter) or more, and first
 * makes the blocks of the generation four back old (hsr_gen_advance, table.c). An old
 * block keeps its birth clock since tracking began in units of 2^14 raw units (about
 * 5 us; 37 bits, about 9 days at 3 GHz): its lifetime, at least two generations long
 * (about 23 s), is then exact to those microseconds, closer than the counter's
 * conversion to nanoseconds is over that time. A block that cannot be stamped (born
 * later than that, or when the generations are used up) goes to the wide table
 * (wide.h) whole.
 *
 * The allocation number, 20 bits: its low bits; the rest, its epoch (of 2^20
 * allocations), from the birth clock and the table's log of the clock at which each
 * of its epochs began (in its tracking state, thread.h; hsr_stamp_epoch_begun). A
 * block born within one clock unit of its epoch's beginning is told apart by its low
 * bits (fewer than 2^19 allocations happen in a unit). Up to 2^44 allocations a table.
 */
#ifndef HSR_TRACK_STAMPS_H
#define HSR_TRACK_STAMPS_H

#include "common.h"
#include "track/thread.h"

#define HSR_STAMP_CLOCK_BITS 38
#define HSR_STAMP_OFFSET_BITS 35 /* a young block's offset field */
#define HSR_STAMP_OLD (1ull << 37)
#define HSR_STAMP_SEQ_BITS 20
#define HSR_GENERATIONS (1u << 20) /* generations at most: years of a run */

extern HSR_HIDDEN uint64_t *hsr_gen_start;  /* the raw clock each generation began */
extern HSR_HIDDEN _Atomic uint64_t hsr_gen; /* the current generation */
/* A generation's length, 2^hsr_gen_bits raw units (HSR_STAMP_OFFSET_BITS; fewer with
 * HEAPSCOPE_TRACK_GENERATION_BITS, which the tests set to make blocks old within a
 * run), and an old block's clock unit, 2^hsr_old_shift: 2^14 by default, exact (1)
 * when the generations are 2^21 units or shorter. */
extern HSR_HIDDEN unsigned hsr_gen_bits, hsr_old_shift;

enum { HSR_STAMP_OK, HSR_STAMP_ADVANCE, HSR_STAMP_WIDE };

/* The clock field of a block born at raw clock `born`, generation `gen` current: OK,
 * ADVANCE (the generation is full: begin the next, then stamp again), or WIDE. */
static inline int hsr_stamp_clock(uint64_t born, uint64_t gen, uint64_t *field)
{
    uint64_t start = hsr_gen_start[gen];
    if (HSR_LIKELY(born >= start)) {
        if (HSR_UNLIKELY((born - start) >> hsr_gen_bits))
            return gen + 1 < HSR_GENERATIONS ? HSR_STAMP_ADVANCE : HSR_STAMP_WIDE;
        *field = (gen & 3) << HSR_STAMP_OFFSET_BITS | (born - start);
        return HSR_STAMP_OK;
    }
    /* read before a generation began, stamped after: the one before, if it reaches */
    if (gen && born >= hsr_gen_start[gen - 1] &&
        !((born - hsr_gen_start[gen - 1]) >> hsr_gen_bits)) {
        *field = ((gen - 1) & 3) << HSR_STAMP_OFFSET_BITS | (born - hsr_gen_start[gen - 1]);
        return HSR_STAMP_OK;
    }
    return HSR_STAMP_WIDE;
}

/* An old block's clock field, or 0 (it cannot be one: WIDE). */
static inline uint64_t hsr_stamp_clock_old(uint64_t born)
{
    uint64_t units = (born - hsr_gen_start[0]) >> hsr_old_shift;
    return born >= hsr_gen_start[0] && units < HSR_STAMP_OLD ? HSR_STAMP_OLD | units : 0;
}

static inline int hsr_stamp_young_of(uint64_t field, uint64_t parity)
{
    return !(field & HSR_STAMP_OLD) && (field >> HSR_STAMP_OFFSET_BITS & 3) == parity;
}

/* The birth clock a field says, with generation `gen` current: its first raw unit;
 * *span: how many units it may be (1: exact). */
static inline uint64_t hsr_stamp_born(uint64_t field, uint64_t gen, uint64_t *span)
{
    if (field & HSR_STAMP_OLD) {
        *span = 1ull << hsr_old_shift;
        return hsr_gen_start[0] + ((field & (HSR_STAMP_OLD - 1)) << hsr_old_shift);
    }
    uint64_t g = gen - ((gen - (field >> HSR_STAMP_OFFSET_BITS)) & 3);
    *span = 1;
    return hsr_gen_start[g] + (field & ((1ull << HSR_STAMP_OFFSET_BITS) - 1));
}

/* stamps.c */
HSR_HIDDEN int hsr_stamps_init(void); /* the generations' log; -1: no memory */
/* At the birth of allocation number `seq` (its low bits 0: a new epoch) of table ts
 * at raw clock `clock`; -1 when its epochs are used up (2^24). */
HSR_HIDDEN int hsr_stamp_epoch_begun(struct hsr_track_thread *ts, uint64_t seq, uint64_t clock);
/* The allocation number of a block of table ts from its low bits, born at raw clock
 * [born, born + span). */
HSR_HIDDEN uint64_t hsr_stamp_seq(const struct hsr_track_thread *ts, uint64_t low, uint64_t born,
                                  uint64_t span);

/* The allocation number's low bits go in the slot once its epoch is logged. */
static inline int hsr_stamp_seq_ready(struct hsr_track_thread *ts, uint64_t seq, uint64_t clock)
{
    if (HSR_UNLIKELY(!(seq & ((1u << HSR_STAMP_SEQ_BITS) - 1))))
        return hsr_stamp_epoch_begun(ts, seq, clock);
    return 0;
}

#endif
