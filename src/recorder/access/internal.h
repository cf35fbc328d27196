/*
 * internal.h — what the files of access/ share: the sampled blocks' records, the
 * rows they are added up in, the pool of pages, the page reader and the lock.
 *
 * A sampled block is one the stacks' byte sampling picked (stacks/sampling.h). Below
 * HSR_ACCESS_LARGE bytes it is served from the pool, on fresh pages of its own
 * (pool.c), so that its pages' state is the block's; from that size on it stays where
 * the allocator put it and its inner pages are made fresh (MADV_DONTNEED) unless they
 * already are (blocks.c). Either way a page of the block is then, as the kernel keeps
 * it: not present (never touched), the shared zero page (read, never written), or a
 * page of its own (written), which pages.c reads from /proc/self/pagemap. Nothing is
 * ever protected: the program, the kernel (read(2), process_vm_writev) and an RDMA
 * NIC use the block exactly as they would any other.
 *
 * Records and rows live in mmap'd arrays; every change is made under one spinlock
 * (sampled blocks are rare: one a mean 512 KiB of allocations apart by default).
 */
#ifndef HSR_ACCESS_INTERNAL_H
#define HSR_ACCESS_INTERNAL_H

#include "access/access.h"
#include "common.h"
#include "core/pool.h"

struct hsr_stack_entry;

#define HSR_ACCESS_HIST 64u /* first-touch bins: 0 for 0 ns, else floor(log2 ns) + 1, capped */

/* A record's life: READY (a pool slot taken, the block not born yet), LIVE; a pool
 * block then RELEASED (freed, its pages not read yet); FREE again once read. */
enum { HSR_BLOCK_FREE, HSR_BLOCK_LIVE, HSR_BLOCK_READY, HSR_BLOCK_RELEASED };
enum { HSR_IN_POOL = 1, HSR_IN_PLACE = 2 };

/* One sampled block being measured. */
struct hsr_access_block {
    uintptr_t start;      /* the block's address */
    uint64_t size;        /* requested bytes */
    uintptr_t lo, hi;     /* its pages that are measured: fresh at its birth */
    uint64_t kept;        /* bytes from the start that a realloc carried over: touched */
    uint64_t born_ns;     /* CLOCK_MONOTONIC */
    uint64_t after_ns;    /* the last time it was seen untouched */
    uint64_t by_ns;       /* the first time it was seen touched; 0: not yet */
    uint64_t released_ns; /* a pool block: when it was freed */
    uint64_t seen_bytes;  /* settle.c: its touched bytes in the scan under way */
    uint32_t row;         /* its row (rows.c) */
    uint32_t next_free;   /* free list of records */
    uint8_t state;        /* HSR_BLOCK_* */
    uint8_t kind;         /* HSR_IN_POOL, HSR_IN_PLACE */
    uint8_t zeroed;       /* calloc: reading it before writing is no uninitialised read */
    uint8_t read_first;   /* a page was seen read while unwritten (the zero page) */
    uint8_t huge;         /* a huge page was seen in it */
    uint8_t inherited;    /* alive at a fork, in the child: not this process's */
    uint8_t unjudged;     /* read-first cannot be told (page flags, alive at a fork) */
    uint8_t seen;         /* settle.c: touched (1) or on the zero page too (3) in that scan */
    uint8_t dirty;        /* DONE: some page present, to be dropped */
};

/* The figures of one (region, size, stack type): finished blocks, added at their end. */
struct hsr_access_figures {
    uint64_t samples, measured, touched_bytes, never_touched, read_first, zeroed, huge;
    uint64_t after_hist[HSR_ACCESS_HIST], by_hist[HSR_ACCESS_HIST];
};

struct hsr_access_row {
    const struct hsr_stack_entry *type; /* NULL: samples without a stack */
    uint64_t size;
    uint32_t region;
    uint32_t used;
    struct hsr_access_figures f;
};

/* What one look at a block's pages found. */
struct hsr_access_look {
    uint64_t touched_bytes; /* bytes of the block on pages read or written */
    int touched;            /* any page read or written */
    int zero_page;          /* a page read, never written */
    int huge;               /* a huge page */
    int ok;                 /* the pages could be read */
};

/* ---- the lock (blocks.c): a spinlock; a signal's snapshot only tries it ---- */
HSR_HIDDEN void hsr_access_lock(void);
HSR_HIDDEN int hsr_access_trylock(int spins); /* 1: taken */
HSR_HIDDEN void hsr_access_unlock(void);

/* ---- pages.c: the state of a range of pages ---- */
HSR_HIDDEN int hsr_pages_init(const char *forced); /* the mechanism, HS_ACCESS_* */
HSR_HIDDEN void hsr_pages_after_fork_child(void);
extern HSR_HIDDEN int hsr_pages_mechanism;
extern HSR_HIDDEN uintptr_t hsr_page_size;
/* Pages of [lo, hi) (page-aligned) that are present, zero or huge: calls fn once per run of
 * pages in one state; 0, or -1 when the pages could not be read. */
typedef void (*hsr_pages_fn)(void *ctx, uintptr_t lo, uintptr_t hi, int zero, int huge);
HSR_HIDDEN int hsr_pages_touched(uintptr_t lo, uintptr_t hi, void *ctx, hsr_pages_fn fn);
/* madvise(MADV_DONTNEED) through libc (MPI memory hooks see it); 0 on success. */
HSR_HIDDEN int hsr_pages_drop(uintptr_t lo, uintptr_t hi);

/* ---- pool.c: pages of their own for small sampled blocks (all with the lock but for
 * hsr_pool_drop) ---- */
HSR_HIDDEN int hsr_pool_reserve(void); /* 0, or -1: no pool (small blocks unmeasured) */
extern HSR_HIDDEN uintptr_t hsr_pool_base;
extern HSR_HIDDEN uint64_t hsr_pool_span, hsr_pool_peak;
HSR_HIDDEN uintptr_t hsr_pool_take(uint64_t size);   /* 0 when full */
HSR_HIDDEN uint32_t hsr_pool_record(uintptr_t addr); /* 0: none */
HSR_HIDDEN void hsr_pool_set_record(uintptr_t slot, uint64_t size, uint32_t rec);
/* A freed block's pages were read (dirty: some present): its slot no longer holds it. */
HSR_HIDDEN void hsr_pool_read(uintptr_t slot, uint64_t size, int dirty);
/* The next chunk from id `after` on to drop (id + 1, 0: none): drained (whole), or kept by
 * live blocks with many read pages still holding memory. */
HSR_HIDDEN uint32_t hsr_pool_to_drop(uint32_t after, int *whole);
HSR_HIDDEN void hsr_pool_drop(uint32_t id, int whole);    /* without the lock */
HSR_HIDDEN void hsr_pool_dropped(uint32_t id, int whole); /* with it, after */
HSR_HIDDEN uintptr_t hsr_pool_used_end(void);
HSR_HIDDEN void hsr_pool_after_fork_child(void);

/* ---- blocks.c: records ---- */
extern HSR_HIDDEN struct hsr_access_block *hsr_access_blocks;
extern HSR_HIDDEN uint32_t hsr_access_blocks_used; /* records 1 .. used-1 exist */
/* Look at a live block's pages now (with the lock); fills look, updates the record's
 * first touch and read-first. */
HSR_HIDDEN void hsr_access_look_at(struct hsr_access_block *b, uint64_t now,
                                   struct hsr_access_look *look);
/* A look at a pool block from a scan of the whole pool (watch.c): touched or not. */
HSR_HIDDEN void hsr_access_seen(struct hsr_access_block *b, uint64_t now, int touched,
                                int zero_page);
HSR_HIDDEN void hsr_access_finish(uint32_t id, const struct hsr_access_look *look, uint64_t now);
HSR_HIDDEN void hsr_access_record_free(uint32_t id);
extern HSR_HIDDEN uint32_t hsr_access_released; /* pool blocks RELEASED, not read yet */
HSR_HIDDEN void hsr_access_add_finished(struct hsr_access_figures *f,
                                        const struct hsr_access_block *b,
                                        const struct hsr_access_look *look, uint64_t now);

HSR_HIDDEN int hsr_access_blocks_init(void);
HSR_HIDDEN void hsr_access_blocks_after_fork_child(void);
HSR_HIDDEN void hsr_access_blocks_after_fork_parent(void);

/* ---- rows.c ---- */
HSR_HIDDEN int hsr_access_rows_init(void);
HSR_HIDDEN uint32_t hsr_access_rows_find(const struct hsr_stack_entry *type, uint32_t region,
                                         uint64_t size); /* 0: table full */
HSR_HIDDEN struct hsr_access_row *hsr_access_rows_at(uint32_t id);
HSR_HIDDEN uint32_t hsr_access_rows_count(void); /* ids 1 .. count-1 */
HSR_HIDDEN void hsr_access_rows_after_fork_child(void);
extern HSR_HIDDEN _Atomic uint64_t hsr_access_rows_lost;

/* ---- settle.c: the pool's blocks read in one scan, their pages dropped in runs ---- */
/* With the lock: the live pool blocks' first touches, the released ones read and added
 * up (their records free again). */
HSR_HIDDEN void hsr_access_settle_pool(uint64_t now);
/* Takes the lock: settle_pool, then the chunks to drop dropped (outside the lock);
 * drop 0: not those (a signal's snapshot). */
HSR_HIDDEN void hsr_access_settle(uint64_t now, int drop);

/* ---- write.c: every row's figures as of now (finished blocks, and the live ones looked
 * at now), for the snapshot and the job file ---- */
struct hsr_access_live_figures {
    struct hsr_access_figures f;
    uint64_t live;
};
struct hsr_access_now {
    int locked; /* the lock is held until hsr_access_now_end */
    uint32_t nrows;
    struct hsr_access_live_figures **extra; /* per row, NULL: no live block */
    uint64_t live_unread;
    struct hsr_arena arena;
};
HSR_HIDDEN int hsr_access_now_begin(struct hsr_access_now *n, int from_signal);
/* Row id's figures now; NULL when it has no sample. */
HSR_HIDDEN const struct hsr_access_row *hsr_access_now_row(const struct hsr_access_now *n,
                                                           uint32_t id,
                                                           struct hsr_access_figures *f,
                                                           uint64_t *live);
HSR_HIDDEN void hsr_access_now_end(struct hsr_access_now *n);

/* ---- watch.c: the watcher thread ---- */
HSR_HIDDEN void hsr_watch_start(void);
HSR_HIDDEN void hsr_watch_after_fork_child(void);
extern HSR_HIDDEN uint64_t hsr_watch_poll_ns;

/* ---- the settings and counters every file reads ---- */
struct hsr_access_state {
    uint64_t unmeasured_pool, unmeasured_align, unmeasured_other;
    uint32_t flags; /* HSR_ACCESS_FLAG_* */
};
#define HSR_ACCESS_FLAG_FORK_FLAGS 1u /* profile_format.table, ACCESS.flags */
extern HSR_HIDDEN struct hsr_access_state hsr_access_state;

static inline unsigned hsr_access_bin(uint64_t ns)
{
    unsigned b = ns ? 64u - (unsigned)__builtin_clzll(ns) : 0u;
    return b < HSR_ACCESS_HIST ? b : HSR_ACCESS_HIST - 1;
}

#endif
