/*
 * config.h — every tunable constant of the recorder in one place: table bounds,
 * buffer sizes, defaults of the HEAPSCOPE_* settings, waits. Layout constants
 * that follow from the profile format stay next to their code.
 */
#ifndef HSR_CONFIG_H
#define HSR_CONFIG_H

/* ---- counting (count/) ---- */
#define HSR_MAX_REGIONS 4096u          /* distinct region ids; beyond: "(overflow)" */
#define HSR_MAX_REGION_DEPTH 64u       /* nesting depth of the region stacks */
#define HSR_SMALL_SIZES 1024u          /* sizes below are counted in a direct array */
#define HSR_MAX_TABLES 65536u          /* thread tables found by index (hsr_thread_at) */
#define HSR_SELECT_SMALL_LIMIT 65536u  /* selected sizes below: a bitmap */
#define HSR_SELECT_MAX_RANGES 256      /* HEAPSCOPE_STACK_SIZES ranges above it */
#define HSR_SELECT_MAX_REGION_NAMES 64 /* HEAPSCOPE_STACK_REGIONS entries */
#define HSR_FAILED_SLOTS 4096u         /* distinct (region, API, size) of failed calls */

/* ---- stacks (stacks/) ---- */
#define HSR_MAX_DEPTH 256u               /* upper bound for HEAPSCOPE_STACK_DEPTH */
#define HSR_STACK_TYPES (1u << 17)       /* stack types per thread */
#define HSR_STACK_FRAME_SLOTS (1u << 22) /* 32 MiB of addresses per thread, reserved */
#define HSR_STACK_SKIP_MAX 16            /* recorder frames above the caller, at most */
#define HSR_UNWIND_CACHE_DEPTH 64u /* deepest stack the unwind cache keeps (the default depth) */
#define HSR_MODULES_LISTED 4096    /* loaded modules one snapshot lists, at most */

/* ---- tracking (track/) ---- */
#define HSR_TRACK_MAX_BLOCKS_DEFAULT (8u << 20) /* its least, HEAPSCOPE_TRACK_MAX_BLOCKS unset */
#define HSR_FREED_RING 8u                       /* a thread's frees counted this many frees late */
#define HSR_BORN_LOG 1024u                      /* a thread's last birth clocks; a power of two */
#define HSR_FREER_HINTS 4096u                   /* address hash -> ring that last took it */
#define HSR_SHARDS 64u                          /* side table shards (address hash's top 6 bits) */
#define HSR_SIZE_SLOTS (1u << 20)               /* per (region, size) records, all threads */
#define HSR_TRACK_ROWS_PER_CHUNK 8192u
#define HSR_EPOCH_CHUNK 4096u  /* a table's epoch clocks per chunk (track/stamps.h) */
#define HSR_EPOCH_CHUNKS 4096u /* chunks: 2^24 epochs of 2^20 allocations a table */
#define HSR_WINDOWS (1u << 20) /* 1 MiB address windows the compact side table knows */
#define HSR_WINDOW_MEMO 64u    /* a thread's memo of the windows of its last blocks */
#define HSR_TABLE_FIRST 1024u  /* a compact side-table shard's first slots */

/* ---- event trace (trace/) ---- */
#define HSR_TRACE_BUFFER_BYTES (256u << 10)
#define HSR_TRACE_BUFFERS 32u /* in all: back-pressure beyond */
#define HSR_TRACE_ZSTD_LEVEL 1

/* ---- timeline (timeline/) ---- */
#define HSR_TIMELINE_RING 4096u     /* samples; a power of two */
#define HSR_TIMELINE_LABELS 1024u   /* distinct labels per flush (hash table) */
#define HSR_TIMELINE_MS_DEFAULT 100 /* HEAPSCOPE_TIMELINE_MS unset */
#define HSR_TIMELINE_FLUSH_MS_DEFAULT 1000
#define HSR_TIMELINE_TOKEN_WAIT_MS 5000
#define HSR_CALIPER_MS_DEFAULT 10 /* HEAPSCOPE_CALIPER_MS unset */
/* The calipers' reads take at most 1/this of the time: the period stretches. */
#define HSR_CALIPER_COST_SHARE 100
#define HSR_CALIPER_THREAD_SLOTS (1u << 20) /* per-thread call counters */
#define HSR_OWN_MAPS (1u << 16) /* the recorder's own mappings measured (own_memory.c) */

/* ---- memory access, record --access (access/) ---- */
#define HSR_ACCESS_LARGE (64u * 1024u) /* sampled blocks from this size on: measured in place */
#define HSR_ACCESS_PAGE_MIN 4096u /* the smallest page: a block aligned beyond a page starts one */
#define HSR_ACCESS_POOL_BYTES (64ull << 30) /* address space reserved for the small ones' pages */
#define HSR_ACCESS_POOL_MIN (64ull << 20)   /* ... halved down to this (RLIMIT_AS) */
#define HSR_ACCESS_CHUNK_PAGES 512u   /* its chunks: dropped whole once their blocks are read */
#define HSR_ACCESS_BLOCKS (1u << 20)  /* sampled blocks measured at once */
#define HSR_ACCESS_ROWS (1u << 16)    /* (region, size, stack type) rows */
#define HSR_ACCESS_POLL_MS_DEFAULT 10 /* the watcher's period: first touches to within it */
#define HSR_ACCESS_SETTLE 4096u       /* freed pool blocks awaiting the watcher, at most */
/* The watcher's looks take at most 1/this of a CPU: its period stretches. */
#define HSR_ACCESS_COST_SHARE 200

/* ---- the file (output/) ---- */
#define HSR_SEAL_NS 3000000000ull /* background writes refused this long after a seal */
#define HSR_WRITE_LOCK_WAIT_MS 5000
#define HSR_STACK_TYPES_PER_CHUNK 8192u
/* Room reserved ahead of the file's end (profile_writer.c): a stream chunk leaves
 * at least this much (twice the largest snapshot so far, if more) for the next
 * snapshot; reservations grow a step ahead of what is needed. */
#define HSR_PROFILE_ROOM_MIN (32u << 10)
#define HSR_PROFILE_ROOM_STEP (1u << 20)

/* ---- the recorder's own memory, the exec environment (core/) ---- */
#define HSR_POOL_BLOCK (64u * 1024u)
#define HSR_ARENA_CHUNK (1u << 20)
#define HSR_EXEC_ENV_SAVED 16 /* LD_PRELOAD and HEAPSCOPE_* variables kept */

/* ---- the recorder's threads (core/last_thread.c) ---- */
#define HSR_LAST_THREAD_POLL_MS 20  /* once main called pthread_exit: is a helper alone? */
#define HSR_HELPER_SLEEP_MAX_MS 250 /* a helper wakes at least this often to look */

/* ---- a job torn down (core/teardown.c) ---- */
#define HSR_TEARDOWN_WAIT_MS 3000  /* a rank waits at most this long for its siblings' snapshots */
#define HSR_TEARDOWN_SETTLE_MS 250 /* and for this long for any that still runs */
#define HSR_TEARDOWN_SLOTS 512     /* ranks of one launcher waited for */

/* ---- crashes (core/signals.c) ---- */
#define HSR_CRASH_STACK_BYTES (256u * 1024u) /* alternate signal stack, reserved at start */
#define HSR_CRASH_WAIT_MS 5000 /* another thread's crash snapshot is awaited this long */

/* ---- tracking's side table bound (track/settings.c) ---- */
/* Unset HEAPSCOPE_TRACK_MAX_BLOCKS: the table may take this share of the memory the
 * process may have (RAM, or RLIMIT_AS when lower), at its worst 128 bytes a block
 * (a half-full shard just doubled): 1/4 of 23 GB holds 45 M live blocks. */
#define HSR_TRACK_TABLE_MEMORY_SHARE 4u
#define HSR_TRACK_SLOT_BYTES_WORST 128u

/* ---- the job file (output/job_file.c, job_summary.c) ---- */
#define HSR_JOB_PER_RANK_SAMPLED 4 /* HEAPSCOPE_PER_RANK unset: ranks kept besides min/max */
#define HSR_JOB_ROWS_PER_CHUNK 65536u
/* the job file's peak stack types (output/job_peak_stacks.c): each rank's K largest at
 * its peak; at most KEPT types travel in one message of the tree; TOP are written */
#define HSR_JOB_PEAK_PER_RANK 8u
#define HSR_JOB_PEAK_KEPT 256u
#define HSR_JOB_PEAK_TOP 20u

#endif
