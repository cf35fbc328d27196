/*
 * recorder.h — the interfaces between the parts of libheapscope.so.
 *
 * Data flows one way:
 *   hooks*.c (interposed functions) -> counters.c / stacks.c (per-thread tables)
 *   -> snapshot.c (merge at dump) -> profile_writer.c (chunks on disk).
 * regions.c says which region an allocation counts for, selection.c which
 * (size, region) pairs get their stack captured, modules.c what is loaded,
 * lifecycle.c when the file is opened and when snapshots are taken.
 *
 * Nothing here allocates through the program's allocator: internal memory comes
 * from pool.c (mmap).
 */
#ifndef HS_RECORDER_H
#define HS_RECORDER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "profile_format.h"

#define HS_TLS __thread __attribute__((tls_model("initial-exec")))
#define HS_LIKELY(x) __builtin_expect(!!(x), 1)
#define HS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HS_HIDDEN __attribute__((visibility("hidden")))

#define HS_VERSION "0.1.0"
#define HS_MAX_REGIONS 4096u      /* distinct region ids; beyond: "(overflow)" */
#define HS_MAX_REGION_DEPTH 64u   /* nesting depth of the region stacks */
#define HS_SMALL_SIZES 1024u      /* sizes below are counted in a direct array */
#define HS_MAX_DEPTH 256u         /* upper bound for HEAPSCOPE_STACK_DEPTH */

/* Relaxed increment of a counter only its owner thread writes: a plain add on
 * x86-64, but a race-free read for the dumping thread. */
static inline void hs_bump(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* ---- pool.c: internal memory, straight from mmap ---- */
HS_HIDDEN void *hs_map(size_t bytes);            /* zeroed; NULL on failure */
HS_HIDDEN void hs_unmap(void *p, size_t bytes);
HS_HIDDEN void *hs_pool_alloc(size_t bytes);     /* small, permanent, zeroed */
HS_HIDDEN char *hs_pool_strdup(const char *s);
HS_HIDDEN void hs_pool_lock(void);               /* fork */
HS_HIDDEN void hs_pool_unlock(void);

struct hs_arena_chunk;
struct hs_arena { struct hs_arena_chunk *head; };  /* scratch memory of one dump */
HS_HIDDEN void *hs_arena_alloc(struct hs_arena *a, size_t bytes);  /* zeroed */
HS_HIDDEN void hs_arena_free(struct hs_arena *a);

/* ---- hooks.c: the next definitions of the interposed functions ---- */
struct hs_real {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);   /* NULL: use posix_memalign */
    void *(*memalign)(size_t, size_t);        /* NULL: use posix_memalign */
    void *(*valloc)(size_t);                  /* NULL: use posix_memalign */
    void *(*pvalloc)(size_t);                 /* NULL: use posix_memalign */
    void *(*reallocarray)(void *, size_t, size_t);  /* NULL: use realloc */
};
extern HS_HIDDEN struct hs_real hs_real;
HS_HIDDEN void hs_resolve(void);
/* dlsym(RTLD_NEXT, name), guarded; NULL if there is no next definition */
HS_HIDDEN void *hs_next(const char *name);

/* ---- guard.h: the re-entrancy guard, see there ---- */

/* ---- regions.c ---- */
struct hs_region {
    uint32_t parent;        /* HS_NO_PARENT for region 0 */
    uint8_t stack_selected; /* stacks wanted for allocations in this region */
    const char *name;       /* "" for region 0 */
};
extern HS_HIDDEN _Atomic uint32_t hs_process_region;   /* innermost process-wide */
extern HS_HIDDEN uint8_t hs_region_stacks[HS_MAX_REGIONS]; /* copy of stack_selected */
/* Where the calling thread is, read as one word by the hot path: both 0 for most
 * threads most of the time (the process-wide region applies). */
union hs_place {
    struct {
        uint32_t region;     /* the thread's own region override + 1; 0 = none */
        uint32_t component;  /* depth inside a component's calls (MPI, component.c) */
    } in;
    uint64_t any;
};
extern HS_HIDDEN HS_TLS union hs_place hs_place;
/* component.c: the component's child region of `parent` (interned on first use) */
HS_HIDDEN uint32_t hs_component_region(uint32_t parent);

static inline uint32_t hs_current_region(void)
{
    union hs_place p = hs_place;
    if (HS_LIKELY(!p.any))
        return atomic_load_explicit(&hs_process_region, memory_order_relaxed);
    uint32_t r = p.in.region ? p.in.region - 1
                             : atomic_load_explicit(&hs_process_region, memory_order_relaxed);
    return p.in.component ? hs_component_region(r) : r;
}
/* The region a thread-only region begun now would nest in: the thread's own,
 * never the component's (a region begun inside an MPI call is not MPI's). */
static inline uint32_t hs_thread_parent_region(void)
{
    uint32_t t = hs_place.in.region;
    return t ? t - 1 : atomic_load_explicit(&hs_process_region, memory_order_relaxed);
}
HS_HIDDEN uint32_t hs_region_intern(uint32_t parent, const char *name);  /* locks */
HS_HIDDEN uint32_t hs_region_count(void);                 /* ids 0 .. count-1 exist */
HS_HIDDEN const struct hs_region *hs_region_get(uint32_t id);
HS_HIDDEN void hs_regions_begin(const char *name, int thread_only);
HS_HIDDEN void hs_regions_end(int thread_only);
HS_HIDDEN void hs_regions_reselect(void);  /* recompute stack_selected (after selection init) */
HS_HIDDEN uint64_t hs_regions_unbalanced(void);
HS_HIDDEN void hs_regions_lock(void);      /* fork */
HS_HIDDEN void hs_regions_unlock(void);

/* ---- selection.c: which sizes/regions get stack traces ---- */
#define HS_SELECT_SMALL_LIMIT 65536u
extern HS_HIDDEN int hs_stacks_on;          /* any size selected at all */
extern HS_HIDDEN int hs_select_all;         /* "all" */
extern HS_HIDDEN uint64_t hs_select_bits[HS_SELECT_SMALL_LIMIT / 64];
HS_HIDDEN int hs_selection_init(const char *sizes, const char *regions, char *err, size_t errlen);
HS_HIDDEN int hs_size_selected(uint64_t size);
HS_HIDDEN int hs_region_name_selected(const char *name, const char *path);

/* ---- counters.c: per-thread count tables ---- */
struct hs_thread;
extern HS_HIDDEN HS_TLS struct hs_thread *hs_self;
HS_HIDDEN struct hs_thread *hs_thread_attach(void);
/* hs_count_alloc, hs_count_call: counting.h (inline) */
HS_HIDDEN void hs_counters_init(void);
HS_HIDDEN void hs_counters_after_fork_child(void);
HS_HIDDEN uint64_t hs_threads_seen(void);
/* iteration for the merge (snapshot.c) */
HS_HIDDEN struct hs_thread *hs_threads_first(void);
HS_HIDDEN struct hs_thread *hs_threads_next(struct hs_thread *t);
struct hs_stack_table;
HS_HIDDEN struct hs_stack_table *hs_thread_stacks(struct hs_thread *t);
HS_HIDDEN struct hs_stack_table **hs_thread_stacks_slot(struct hs_thread *t);

/* The counts of one thread, seen by the merge: calls fn for every nonzero cell. */
typedef void (*hs_size_fn)(void *ctx, uint32_t region, uint64_t size, uint64_t count);
typedef void (*hs_api_fn)(void *ctx, uint32_t region, unsigned api, uint64_t calls);
HS_HIDDEN void hs_thread_visit(struct hs_thread *t, void *ctx, hs_size_fn sizes, hs_api_fn apis);

/* ---- stacks.c: capture and per-thread stack-type tables ---- */
HS_HIDDEN void hs_stacks_init(int unwinder, unsigned depth);
/* Counts one allocation in its stack trace type; returns the type (stable: types
 * are never moved nor freed) or NULL when the table was full (lost). */
struct hs_stack_entry;
HS_HIDDEN struct hs_stack_entry *hs_stack_record(struct hs_thread *t, uint32_t region,
                                                 uint64_t size);
/* A type's frames, and a pointer-sized slot tracking.c keeps its record in. */
HS_HIDDEN const uint64_t *hs_stack_entry_frames(const struct hs_stack_entry *e, uint32_t *depth);
HS_HIDDEN void *_Atomic *hs_stack_entry_slot(struct hs_stack_entry *e);
HS_HIDDEN uint32_t *hs_stack_entry_trace_id(struct hs_stack_entry *e);  /* owner thread only */
HS_HIDDEN void hs_stacks_after_fork_child(void);
HS_HIDDEN uint64_t hs_stacks_lost(void);
typedef void (*hs_stack_fn)(void *ctx, uint32_t region, uint64_t size, uint32_t depth,
                            const uint64_t *frames, uint64_t count);
HS_HIDDEN void hs_stack_table_visit(struct hs_stack_table *st, void *ctx, hs_stack_fn fn);
HS_HIDDEN void hs_stack_table_clear(struct hs_stack_table *st);

/* ---- modules.c ---- */
struct hs_buf;
HS_HIDDEN void hs_modules_init(void);          /* our own text range */
HS_HIDDEN int hs_in_recorder(uintptr_t addr);  /* addr in libheapscope.so's code */
HS_HIDDEN void hs_modules_write(struct hs_buf *b);  /* MODULES payload */

/* ---- profile_writer.c: file, buffer, chunks ---- */
struct hs_buf { uint8_t *p; size_t len, cap; int failed; };
HS_HIDDEN void hs_buf_u32(struct hs_buf *b, uint32_t v);
HS_HIDDEN void hs_buf_u64(struct hs_buf *b, uint64_t v);
HS_HIDDEN void hs_buf_bytes(struct hs_buf *b, const void *p, size_t n);
HS_HIDDEN void hs_buf_str(struct hs_buf *b, const char *s, size_t n);
HS_HIDDEN size_t hs_chunk_begin(struct hs_buf *b, uint32_t type);
HS_HIDDEN void hs_chunk_end(struct hs_buf *b, size_t start);
HS_HIDDEN void hs_buf_release(struct hs_buf *b);
HS_HIDDEN int hs_profile_open(void);       /* open a new file, write header/PROCESS/SETTINGS */
HS_HIDDEN int hs_profile_write(struct hs_buf *b);   /* append, -1 on failure */
HS_HIDDEN void hs_profile_close(void);
HS_HIDDEN int hs_profile_is_open(void);
HS_HIDDEN const char *hs_profile_path(void);
HS_HIDDEN int hs_profile_pid(void);        /* the process the open file belongs to */
/* Concurrent writers: see the top of profile_writer.c. A background thread (one of
 * the recorder's own: the timeline sampler) marks itself; hs_profile_seal(), called
 * when the process is about to end, waits for the write in progress and refuses
 * background writes for a few seconds, so no write is cut by the process's end. */
HS_HIDDEN void hs_profile_background(void);
HS_HIDDEN void hs_profile_seal(void);
HS_HIDDEN int hs_profile_sealed(void);
HS_HIDDEN void hs_profile_after_fork_child(void);

/* ---- snapshot.c: merge everything and append one snapshot ---- */
HS_HIDDEN int hs_snapshot(unsigned reason, int from_signal);
HS_HIDDEN void hs_snapshot_reset_baseline(void);
HS_HIDDEN void hs_snapshot_after_fork_child(void);
HS_HIDDEN void hs_dump_lock_for_fork(void);
HS_HIDDEN void hs_dump_unlock_for_fork(void);

/* ---- timeline.c, timeline_calipers.c, smaps.c: heap/RSS/PSS over time ----
 * Samples go into a lock-free ring (any thread, signal handlers too) and are
 * appended to the file as TIMELINE chunks by the sampler thread every flush period,
 * when the ring fills, and before every snapshot (profile_format.h, types 20..29). */
extern HS_HIDDEN int hs_timeline_on;              /* HEAPSCOPE_TIMELINE_MS != 0 */
HS_HIDDEN void hs_timeline_settings(void);        /* read HEAPSCOPE_TIMELINE_* (before counting) */
HS_HIDDEN void hs_timeline_start(void);           /* ring, sampler thread (file open) */
HS_HIDDEN void hs_timeline_region(unsigned kind, uint32_t region);  /* process-wide boundary */
HS_HIDDEN void hs_timeline_snapshot(int from_signal);  /* "final" sample + flush, before a snapshot */
HS_HIDDEN void hs_timeline_after_fork_child(void);
struct hs_sample {
    uint64_t mono_ns;
    uint32_t kind;          /* HS_SAMPLE_* */
    uint32_t region;
    const char *label;      /* MPI function (a string that lives forever), or NULL */
    int64_t heap, heap_component, rss, pss;   /* -1: not measured */
};
HS_HIDDEN void hs_timeline_measure(struct hs_sample *s, int with_pss);  /* heap + memory now */
HS_HIDDEN void hs_timeline_add(const struct hs_sample *s);  /* append (may flush when full) */
HS_HIDDEN void hs_timeline_calipers_reset(void);
/* the caliper totals written in every TIMELINE chunk */
struct hs_caliper_totals { uint64_t taken, skipped; int64_t rss_delta, pss_delta; };
HS_HIDDEN void hs_calipers_totals(struct hs_caliper_totals *t);
extern HS_HIDDEN int64_t hs_caliper_ns;          /* rate limit; 0 every call; -1 off */
/* The calipers' reads take at most 1/this of the time: the period stretches. */
#define HS_CALIPER_COST_SHARE 100
HS_HIDDEN uint64_t hs_caliper_period(void);      /* ns until the next measured call */
/* The sampler thread arms the calipers every hs_caliper_ns once they are active (a
 * layer attached); the next outermost MPI call disarms and is measured. */
extern HS_HIDDEN _Atomic int hs_calipers_active, hs_caliper_armed, hs_sampler_running;
HS_HIDDEN _Atomic uint64_t *hs_calipers_thread_calls(void);  /* this thread's call counter */
HS_HIDDEN int hs_read_memory(int64_t *rss, int64_t *pss);  /* smaps_rollup; pss -1 if unknown */
HS_HIDDEN int hs_read_rss(int64_t *rss);                   /* statm (cheap) */

/* ---- exec_env.c: the environment an exec'd child needs to be recorded ---- */
HS_HIDDEN void hs_exec_env_init(void);
HS_HIDDEN size_t hs_exec_env_slots(char *const envp[]);
HS_HIDDEN size_t hs_exec_env_bytes(char *const envp[]);
HS_HIDDEN char *const *hs_exec_env(char *const envp[], char **room, char *buf, size_t buflen);

/* ---- lifecycle.c: settings and state ---- */
struct hs_settings {
    const char *output_dir;
    const char *stack_sizes;     /* as given, "" if none */
    const char *stack_regions;   /* as given, "" = all */
    uint32_t max_depth;
    uint32_t unwinder;           /* 0 dwarf, 1 frame pointers */
};
extern HS_HIDDEN struct hs_settings hs_settings;
extern HS_HIDDEN _Atomic int hs_recording;       /* 0: hooks only forward */
extern HS_HIDDEN uint64_t hs_start_real_ns, hs_start_mono_ns;
HS_HIDDEN void hs_init(void);                    /* idempotent */
HS_HIDDEN void hs_warn(const char *msg);          /* "heapscope: <msg>\n" on stderr */
HS_HIDDEN void hs_before_exec(void);
HS_HIDDEN void hs_before_exit_now(void);         /* _exit: dump if this process owns the file */
HS_HIDDEN int hs_signal_owned(int sig);          /* our handler is installed */
HS_HIDDEN void hs_signal_release(int sig);       /* the program takes the signal over */
HS_HIDDEN uint64_t hs_now_ns(int clock);

/* ---- blocks.c, heap_accounting.c: watching every block (off by default) ----
 * With hs_heap_watch set (by the timeline at init, and by tracking and trace
 * mode), every hook reports each block's birth and death (blocks.h), and the heap
 * in use is accounted per thread. Counts-only recording leaves it 0: the hooks
 * then pay one predictable branch. */
extern HS_HIDDEN int hs_heap_watch;
/* Bytes of heap in use now (summed over the threads' counters), and the part
 * allocated inside component calls. Usable sizes (malloc_usable_size of the next
 * allocator), or requested sizes when tracking is on (hs_heap_measure_requested). */
HS_HIDDEN void hs_heap_in_use(int64_t *total, int64_t *component);
HS_HIDDEN int hs_heap_measure_requested(void);
/* counters.c: a thread table by its index (struct hs_thread.index), NULL if none */
#define HS_MAX_TABLES 65536u
HS_HIDDEN struct hs_thread *hs_thread_at(uint32_t index);

/* ---- tracking.c, tracking_write.c: tracking mode (HEAPSCOPE_TRACK=1) ----
 * A side table of live blocks and, per stack trace type (selected sizes) or per
 * size (the others), lifetimes, temporaries, blocks live at the peak and at the
 * snapshot (profile_format.h, TRACK_* chunks). */
extern HS_HIDDEN int hs_track_on;
HS_HIDDEN void hs_tracking_init(void);                /* HEAPSCOPE_TRACK*: idempotent */
HS_HIDDEN void hs_tracking_write(struct hs_buf *b);   /* TRACK_* chunks of a snapshot */

/* ---- trace.c, trace_writer.c: event trace mode (HEAPSCOPE_TRACE=1) ---- */
extern HS_HIDDEN int hs_trace_on;
HS_HIDDEN void hs_trace_init(void);                    /* HEAPSCOPE_TRACE: idempotent */
/* Before a snapshot: every buffered event into the file. final: the process ends. */
HS_HIDDEN void hs_trace_flush(int final, int from_signal);
/* fast_clock.c: CLOCK_MONOTONIC ns from the TSC when the kernel uses it */
HS_HIDDEN void hs_fast_clock_init(void);
HS_HIDDEN void hs_fast_clock_refine(void);   /* the sampler thread, about once a second */

#endif
