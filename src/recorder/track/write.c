/*
 * write.c — the TRACK_SUMMARY and TRACK_TYPES chunks of a snapshot
 * (layouts in profile_format.h), from tracking's records (records.c).
 *
 * Runs inside hsr_snapshot (also from a signal handler): it reads the records'
 * counters, takes no lock, allocates nothing but the dump's buffer.
 */
#define _GNU_SOURCE
#include <string.h>

#include "output/profile_writer.h"
#include "track/track.h"
#include "track/tracking.h"

/* The nonzero bins of a histogram (both counter sets): a mask, and their values
 * in bin order. */
static void hist_bins(_Atomic uint64_t *own, _Atomic uint64_t *shared, uint64_t *values,
                      uint64_t *mask)
{
    unsigned n = 0;
    *mask = 0;
    for (unsigned i = 0; i < HSR_LIFETIME_BINS; i++) {
        uint64_t v = atomic_load_explicit(&own[i], memory_order_relaxed) +
                     atomic_load_explicit(&shared[i], memory_order_relaxed);
        if (v) {
            *mask |= 1ull << i;
            values[n++] = v;
        }
    }
}

static void write_row(struct hsr_buf *b, struct hsr_track_rec *r)
{
    uint64_t time_v[HSR_LIFETIME_BINS], between_v[HSR_LIFETIME_BINS], time_m, between_m;
    hist_bins(r->own.time_hist, r->shared.time_hist, time_v, &time_m);
    hist_bins(r->own.between_hist, r->shared.between_hist, between_v, &between_m);
    int64_t live = hsr_track_live(r);
    int64_t at_peak = atomic_load_explicit(&r->live_at_peak, memory_order_relaxed);
    hsr_buf_u32(b, r->region);
    hsr_buf_u32(b, r->frames ? r->depth : 0);
    hsr_buf_u64(b, r->size);
    hsr_buf_u64(b, HSR_TRACK_TOTAL(r, allocs));
    hsr_buf_u64(b, HSR_TRACK_TOTAL(r, frees));
    hsr_buf_u64(b, HSR_TRACK_TOTAL(r, temporaries));
    hsr_buf_u64(b, at_peak > 0 ? (uint64_t)at_peak : 0);
    hsr_buf_u64(b, live > 0 ? (uint64_t)live : 0);
    hsr_buf_u64(b, HSR_TRACK_TOTAL(r, extra_bytes));
    hsr_buf_u64(b, time_m);
    hsr_buf_u64(b, between_m);
    hsr_buf_bytes(b, time_v, (size_t)__builtin_popcountll(time_m) * 8);
    hsr_buf_bytes(b, between_v, (size_t)__builtin_popcountll(between_m) * 8);
    if (r->frames)
        hsr_buf_bytes(b, r->frames, (size_t)r->depth * 8);
}

void hsr_tracking_write(struct hsr_buf *b)
{
    if (!hsr_track_on)
        return;
    hsr_track_peak_now();
    struct hsr_track_figures f;
    hsr_track_figures(&f);
    size_t c = hsr_chunk_begin(b, HS_TRACK_SUMMARY);
    hsr_buf_u32(
        b, (uint32_t)(hsr_track.temp_between > UINT32_MAX ? UINT32_MAX : hsr_track.temp_between));
    hsr_buf_u32(b, 0);
    hsr_buf_u64(b, hsr_track.temp_ns);
    hsr_buf_u64(b, f.peak_bytes > 0 ? (uint64_t)f.peak_bytes : 0);
    hsr_buf_u64(b, f.peak_mono_ns);
    hsr_buf_u64(b, f.end_bytes > 0 ? (uint64_t)f.end_bytes : 0);
    hsr_buf_u64(b, f.untracked);
    hsr_buf_u64(b, f.table_bytes > 0 ? (uint64_t)f.table_bytes : 0);
    hsr_buf_u64(b, hsr_track.max_blocks);
    hsr_chunk_end(b, c);
    c = hsr_chunk_begin(b, HS_TRACK_UNTRACKED);
    hsr_buf_u64(b, f.untracked);
    hsr_buf_u64(b, f.untracked_bytes);
    hsr_chunk_end(b, c);

    struct hsr_rows rows = {.type = HS_TRACK_TYPES, .per_chunk = HSR_TRACK_ROWS_PER_CHUNK};
    for (struct hsr_track_rec *r = hsr_track_records(); r; r = r->next) {
        if (!HSR_TRACK_TOTAL(r, allocs))
            continue;
        hsr_rows_next(b, &rows);
        write_row(b, r);
    }
    hsr_rows_done(b, &rows);
}
