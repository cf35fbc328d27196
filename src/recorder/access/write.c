/*
 * write.c — the ACCESS and ACCESS_TYPES chunks of a snapshot (profile_format.table):
 * each row's finished blocks plus its blocks live now, looked at now (the same pass
 * gives the job file its figures: job.c). A snapshot from a signal handler only tries
 * the lock (the thread it interrupted may hold it): without it, the live blocks are
 * left out and counted in live_unread.
 */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>

#include "access/internal.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "output/profile_writer.h"
#include "stacks/sampling.h"
#include "stacks/stacks.h"

static void add_figures(struct hsr_access_figures *to, const struct hsr_access_figures *from)
{
    to->samples += from->samples;
    to->measured += from->measured;
    to->touched_bytes += from->touched_bytes;
    to->never_touched += from->never_touched;
    to->read_first += from->read_first;
    to->zeroed += from->zeroed;
    to->huge += from->huge;
    for (unsigned i = 0; i < HSR_ACCESS_HIST; i++) {
        to->after_hist[i] += from->after_hist[i];
        to->by_hist[i] += from->by_hist[i];
    }
}

static void write_hist(struct hsr_buf *b, const uint64_t *hist, uint64_t mask)
{
    for (unsigned i = 0; i < HSR_ACCESS_HIST; i++)
        if (mask >> i & 1)
            hsr_buf_u64(b, hist[i]);
}

static uint64_t hist_mask(const uint64_t *hist)
{
    uint64_t mask = 0;
    for (unsigned i = 0; i < HSR_ACCESS_HIST; i++)
        if (hist[i])
            mask |= 1ull << i;
    return mask;
}

static void write_row(struct hsr_buf *b, const struct hsr_access_row *r,
                      const struct hsr_access_figures *f, uint64_t live)
{
    uint32_t depth = 0;
    const uint64_t *frames = r->type ? hsr_stack_entry_frames(r->type, &depth) : NULL;
    uint64_t after = hist_mask(f->after_hist), by = hist_mask(f->by_hist);
    hsr_buf_u32(b, r->region);
    hsr_buf_u32(b, frames ? depth : 0);
    hsr_buf_u64(b, r->size);
    hsr_buf_u64(b, f->samples);
    hsr_buf_u64(b, f->measured);
    hsr_buf_u64(b, live);
    hsr_buf_u64(b, f->touched_bytes);
    hsr_buf_u64(b, f->never_touched);
    hsr_buf_u64(b, f->read_first);
    hsr_buf_u64(b, f->zeroed);
    hsr_buf_u64(b, f->huge);
    hsr_buf_u64(b, after);
    hsr_buf_u64(b, by);
    write_hist(b, f->after_hist, after);
    write_hist(b, f->by_hist, by);
    if (frames)
        hsr_buf_bytes(b, frames, (size_t)depth * 8);
}

int hsr_access_now_begin(struct hsr_access_now *n, int from_signal)
{
    memset(n, 0, sizeof *n);
    n->locked = hsr_access_trylock(from_signal ? 1000 : -1);
    n->nrows = hsr_access_rows_count();
    n->extra = hsr_arena_alloc(&n->arena, (size_t)n->nrows * sizeof *n->extra);
    uint64_t now = hsr_now_ns(CLOCK_MONOTONIC);
    if (n->locked)
        hsr_access_settle_pool(now); /* the freed pool blocks not read yet: added up now */
    for (uint32_t id = 1; id < hsr_access_blocks_used; id++) {
        struct hsr_access_block *blk = &hsr_access_blocks[id];
        if (blk->state != HSR_BLOCK_LIVE || blk->inherited || !blk->row || blk->row >= n->nrows)
            continue;
        struct hsr_access_look look;
        if (n->locked && n->extra)
            hsr_access_look_at(blk, now, &look);
        if (!n->locked || !n->extra || !look.ok ||
            (!n->extra[blk->row] &&
             !(n->extra[blk->row] = hsr_arena_alloc(&n->arena, sizeof **n->extra)))) {
            n->live_unread++;
            continue;
        }
        hsr_access_add_finished(&n->extra[blk->row]->f, blk, &look, now);
        n->extra[blk->row]->live++;
    }
    return 0;
}

const struct hsr_access_row *hsr_access_now_row(const struct hsr_access_now *n, uint32_t id,
                                                struct hsr_access_figures *f, uint64_t *live)
{
    const struct hsr_access_row *r = hsr_access_rows_at(id);
    if (!r || !r->f.samples)
        return NULL;
    *f = r->f;
    *live = 0;
    if (n->extra && n->extra[id]) {
        add_figures(f, &n->extra[id]->f);
        *live = n->extra[id]->live;
    }
    return r;
}

void hsr_access_now_end(struct hsr_access_now *n)
{
    if (n->locked)
        hsr_access_unlock();
    hsr_arena_free(&n->arena);
}

void hsr_access_write(struct hsr_buf *b, int from_signal)
{
    if (!hsr_access_on)
        return;
    struct hsr_access_now now;
    hsr_access_now_begin(&now, from_signal);
    size_t c = hsr_chunk_begin(b, HS_ACCESS);
    hsr_buf_u32(b, (uint32_t)hsr_pages_mechanism);
    hsr_buf_u32(b, (uint32_t)hsr_page_size);
    hsr_buf_u64(b, hsr_watch_poll_ns);
    hsr_buf_u64(b, hsr_sample_mean);
    hsr_buf_u64(b, HSR_ACCESS_LARGE);
    hsr_buf_u64(b, hsr_access_state.unmeasured_pool);
    hsr_buf_u64(b, hsr_access_state.unmeasured_align);
    hsr_buf_u64(b, hsr_access_state.unmeasured_other);
    hsr_buf_u64(b, hsr_pool_span);
    hsr_buf_u64(b, hsr_pool_peak);
    hsr_buf_u64(b, atomic_load(&hsr_access_rows_lost));
    hsr_buf_u64(b, now.live_unread);
    hsr_buf_u32(b, hsr_access_state.flags);
    hsr_buf_u32(b, 0);
    hsr_chunk_end(b, c);

    struct hsr_rows rows = {.type = HS_ACCESS_TYPES, .per_chunk = HSR_STACK_TYPES_PER_CHUNK};
    for (uint32_t id = 1; id < now.nrows; id++) {
        struct hsr_access_figures f;
        uint64_t live;
        const struct hsr_access_row *r = hsr_access_now_row(&now, id, &f, &live);
        if (!r)
            continue;
        hsr_rows_next(b, &rows);
        write_row(b, r, &f, live);
    }
    hsr_rows_done(b, &rows);
    hsr_access_now_end(&now);
}
