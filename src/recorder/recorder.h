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
#ifndef HSR_RECORDER_H
#define HSR_RECORDER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "profile_format.h"

#define HSR_TLS __thread __attribute__((tls_model("initial-exec")))
#define HSR_LIKELY(x) __builtin_expect(!!(x), 1)
#define HSR_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HSR_HIDDEN __attribute__((visibility("hidden")))

#define HSR_VERSION "0.1.0"
#define HSR_MAX_REGIONS 4096u      /* distinct region ids; beyond: "(overflow)" */
#define HSR_MAX_REGION_DEPTH 64u   /* nesting depth of the region stacks */
#define HSR_SMALL_SIZES 1024u      /* sizes below are counted in a direct array */
#define HSR_MAX_DEPTH 256u         /* upper bound for HEAPSCOPE_STACK_DEPTH */

/* Relaxed increment of a counter only its owner thread writes: a plain add on
 * x86-64, but a race-free read for the dumping thread. */
static inline void hsr_bump(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* ---- pool.c: internal memory, straight from mmap ---- */
HSR_HIDDEN void *hsr_map(size_t bytes);            /* zeroed; NULL on failure */
HSR_HIDDEN void hsr_unmap(void *p, size_t bytes);
HSR_HIDDEN void *hsr_pool_alloc(size_t bytes);     /* small, permanent, zeroed */
HSR_HIDDEN char *hsr_pool_strdup(const char *s);
HSR_HIDDEN void hsr_pool_lock(void);               /* fork */
HSR_HIDDEN void hsr_pool_unlock(void);

struct hsr_arena_chunk;
struct hsr_arena { struct hsr_arena_chunk *head; };  /* scratch memory of one dump */
HSR_HIDDEN void *hsr_arena_alloc(struct hsr_arena *a, size_t bytes);  /* zeroed */
HSR_HIDDEN void hsr_arena_free(struct hsr_arena *a);

/* ---- hooks.c: the next definitions of the interposed functions ---- */
struct hsr_real {
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
extern HSR_HIDDEN struct hsr_real hsr_real;
HSR_HIDDEN void hsr_resolve(void);
/* dlsym(RTLD_NEXT, name), guarded; NULL if there is no next definition */
HSR_HIDDEN void *hsr_next(const char *name);

/* ---- guard.h: the re-entrancy guard, see there ---- */

/* ---- regions.c ---- */
struct hsr_region {
    uint32_t parent;        /* HS_NO_PARENT for region 0 */
    uint8_t stack_selected; /* stacks wanted for allocations in this region */
    const char *name;       /* "" for region 0 */
};
extern HSR_HIDDEN _Atomic uint32_t hsr_process_region;   /* innermost process-wide */
extern HSR_HIDDEN uint8_t hsr_region_stacks[HSR_MAX_REGIONS]; /* copy of stack_selected */
/* Where the calling thread is, read as one word by the hot path: both 0 for most
 * threads most of the time (the process-wide region applies). */
union hsr_place {
    struct {
        uint32_t region;     /* the thread's own region override + 1; 0 = none */
        uint32_t component;  /* depth inside a component's calls (MPI, component.c) */
    } in;
    uint64_t any;
};
extern HSR_HIDDEN HSR_TLS union hsr_place hsr_place;
/* component.c: the component's child region of `parent` (interned on first use) */
HSR_HIDDEN uint32_t hsr_component_region(uint32_t parent);

static inline uint32_t hsr_current_region(void)
{
    union hsr_place p = hsr_place;
    if (HSR_LIKELY(!p.any))
        return atomic_load_explicit(&hsr_process_region, memory_order_relaxed);
    uint32_t r = p.in.region ? p.in.region - 1
                             : atomic_load_explicit(&hsr_process_region, memory_order_relaxed);
    return p.in.component ? hsr_component_region(r) : r;
}
/* The region a thread-only region begun now would nest in: the thread's own,
 * never the component's (a region begun inside an MPI call is not MPI's). */
static inline uint32_t hsr_thread_parent_region(void)
{
    uint32_t t = hsr_place.in.region;
    return t ? t - 1 : atomic_load_explicit(&hsr_process_region, memory_order_relaxed);
}
HSR_HIDDEN uint32_t hsr_region_intern(uint32_t parent, const char *name);  /* locks */
HSR_HIDDEN uint32_t hsr_region_count(void);                 /* ids 0 .. count-1 exist */
HSR_HIDDEN const struct hsr_region *hsr_region_get(uint32_t id);
HSR_HIDDEN void hsr_regions_begin(const char *name, int thread_only);
HSR_HIDDEN void hsr_regions_end(int thread_only);
HSR_HIDDEN void hsr_regions_reselect(void);  /* recompute stack_selected (after selection init) */
HSR_HIDDEN uint64_t hsr_regions_unbalanced(void);
HSR_HIDDEN void hsr_regions_lock(void);      /* fork */
HSR_HIDDEN void hsr_regions_unlock(void);

/* ---- selection.c: which sizes/regions get stack traces ---- */
#define HSR_SELECT_SMALL_LIMIT 65536u
extern HSR_HIDDEN int hsr_stacks_on;          /* any size selected at all */
extern HSR_HIDDEN int hsr_select_all;         /* "all" */
extern HSR_HIDDEN uint64_t hsr_select_bits[HSR_SELECT_SMALL_LIMIT / 64];
HSR_HIDDEN int hsr_selection_init(const char *sizes, const char *regions, char *err, size_t errlen);
HSR_HIDDEN int hsr_size_selected(uint64_t size);
HSR_HIDDEN int hsr_region_name_selected(const char *name, const char *path);

/* ---- counters.c: per-thread count tables ---- */
struct hsr_thread;
extern HSR_HIDDEN HSR_TLS struct hsr_thread *hsr_self;
HSR_HIDDEN struct hsr_thread *hsr_thread_attach(void);
/* hsr_count_alloc, hsr_count_call: counting.h (inline) */
HSR_HIDDEN void hsr_counters_init(void);
HSR_HIDDEN void hsr_counters_after_fork_child(void);
HSR_HIDDEN uint64_t hsr_threads_seen(void);
/* iteration for the merge (snapshot.c) */
HSR_HIDDEN struct hsr_thread *hsr_threads_first(void);
HSR_HIDDEN struct hsr_thread *hsr_threads_next(struct hsr_thread *t);
struct hsr_stack_table;
HSR_HIDDEN struct hsr_stack_table *hsr_thread_stacks(struct hsr_thread *t);
HSR_HIDDEN struct hsr_stack_table **hsr_thread_stacks_slot(struct hsr_thread *t);

/* The counts of one thread, seen by the merge: calls fn for every nonzero cell. */
typedef void (*hsr_size_fn)(void *ctx, uint32_t region, uint64_t size, uint64_t count);
typedef void (*hsr_api_fn)(void *ctx, uint32_t region, unsigned api, uint64_t calls);
HSR_HIDDEN void hsr_thread_visit(struct hsr_thread *t, void *ctx, hsr_size_fn sizes, hsr_api_fn apis);

/* ---- stacks.c: capture and per-thread stack-type tables ---- */
HSR_HIDDEN void hsr_stacks_init(int unwinder, unsigned depth);
/* Counts one allocation in its stack trace type; returns the type (stable: types
 * are never moved nor freed) or NULL when the table was full (lost). */
struct hsr_stack_entry;
HSR_HIDDEN struct hsr_stack_entry *hsr_stack_record(struct hsr_thread *t, uint32_t region,
                                                 uint64_t size);
/* A type's frames, and a pointer-sized slot tracking.c keeps its record in. */
HSR_HIDDEN const uint64_t *hsr_stack_entry_frames(const struct hsr_stack_entry *e, uint32_t *depth);
HSR_HIDDEN void *_Atomic *hsr_stack_entry_slot(struct hsr_stack_entry *e);
HSR_HIDDEN uint32_t *hsr_stack_entry_trace_id(struct hsr_stack_entry *e);  /* owner thread only */
HSR_HIDDEN void hsr_stacks_after_fork_child(void);
HSR_HIDDEN uint64_t hsr_stacks_lost(void);
typedef void (*hsr_stack_fn)(void *ctx, uint32_t region, uint64_t size, uint32_t depth,
                            const uint64_t *frames, uint64_t count);
HSR_HIDDEN void hsr_stack_table_visit(struct hsr_stack_table *st, void *ctx, hsr_stack_fn fn);
HSR_HIDDEN void hsr_stack_table_clear(struct hsr_stack_table *st);

/* ---- modules.c ---- */
struct hsr_buf;
HSR_HIDDEN void hsr_modules_init(void);          /* our own text range */
HSR_HIDDEN int hsr_in_recorder(uintptr_t addr);  /* addr in libheapscope.so's code */
HSR_HIDDEN void hsr_modules_write(struct hsr_buf *b);  /* MODULES payload */

/* ---- profile_writer.c: file, buffer, chunks ---- */
struct hsr_buf { uint8_t *p; size_t len, cap; int failed; };
HSR_HIDDEN void hsr_buf_u32(struct hsr_buf *b, uint32_t v);
HSR_HIDDEN void hsr_buf_u64(struct hsr_buf *b, uint64_t v);
HSR_HIDDEN void hsr_buf_bytes(struct hsr_buf *b, const void *p, size_t n);
HSR_HIDDEN void hsr_buf_str(struct hsr_buf *b, const char *s, size_t n);
HSR_HIDDEN size_t hsr_chunk_begin(struct hsr_buf *b, uint32_t type);
HSR_HIDDEN void hsr_chunk_end(struct hsr_buf *b, size_t start);
HSR_HIDDEN void hsr_buf_release(struct hsr_buf *b);
HSR_HIDDEN int hsr_profile_open(void);       /* open a new file, write header/PROCESS/SETTINGS */
HSR_HIDDEN int hsr_profile_write(struct hsr_buf *b);   /* append, -1 on failure */
HSR_HIDDEN void hsr_profile_close(void);
HSR_HIDDEN int hsr_profile_is_open(void);
HSR_HIDDEN const char *hsr_profile_path(void);
HSR_HIDDEN int hsr_profile_pid(void);        /* the process the open file belongs to */
/* Concurrent writers: see the top of profile_writer.c. A background thread (one of
 * the recorder's own: the timeline sampler) marks itself; hsr_profile_seal(), called
 * when the process is about to end, waits for the write in progress and refuses
 * background writes for a few seconds, so no write is cut by the process's end. */
HSR_HIDDEN void hsr_profile_background(void);
HSR_HIDDEN void hsr_profile_seal(void);
HSR_HIDDEN int hsr_profile_sealed(void);
HSR_HIDDEN void hsr_profile_after_fork_child(void);

/* ---- snapshot.c: merge everything and append one snapshot ---- */
HSR_HIDDEN int hsr_snapshot(unsigned reason, int from_signal);
HSR_HIDDEN void hsr_snapshot_reset_baseline(void);
HSR_HIDDEN void hsr_snapshot_after_fork_child(void);
HSR_HIDDEN void hsr_dump_lock_for_fork(void);
HSR_HIDDEN void hsr_dump_unlock_for_fork(void);

/* ---- timeline.c, timeline_calipers.c, smaps.c: heap/RSS/PSS over time ----
 * Samples go into a lock-free ring (any thread, signal handlers too) and are
 * appended to the file as TIMELINE chunks by the sampler thread every flush period,
 * when the ring fills, and before every snapshot (profile_format.h, types 20..29). */
extern HSR_HIDDEN int hsr_timeline_on;              /* HEAPSCOPE_TIMELINE_MS != 0 */
HSR_HIDDEN void hsr_timeline_settings(void);        /* read HEAPSCOPE_TIMELINE_* (before counting) */
HSR_HIDDEN void hsr_timeline_start(void);           /* ring, sampler thread (file open) */
HSR_HIDDEN void hsr_timeline_region(unsigned kind, uint32_t region);  /* process-wide boundary */
HSR_HIDDEN void hsr_timeline_snapshot(int from_signal);  /* "final" sample + flush, before a snapshot */
HSR_HIDDEN void hsr_timeline_after_fork_child(void);
struct hsr_sample {
    uint64_t mono_ns;
    uint32_t kind;          /* HS_SAMPLE_* */
    uint32_t region;
    const char *label;      /* MPI function (a string that lives forever), or NULL */
    int64_t heap, heap_component, rss, pss;   /* -1: not measured */
};
HSR_HIDDEN void hsr_timeline_measure(struct hsr_sample *s, int with_pss);  /* heap + memory now */
HSR_HIDDEN void hsr_timeline_add(const struct hsr_sample *s);  /* append (may flush when full) */
HSR_HIDDEN void hsr_timeline_calipers_reset(void);
/* the caliper totals written in every TIMELINE chunk */
struct hsr_caliper_totals { uint64_t taken, skipped; int64_t rss_delta, pss_delta; };
HSR_HIDDEN void hsr_calipers_totals(struct hsr_caliper_totals *t);
extern HSR_HIDDEN int64_t hsr_caliper_ns;          /* rate limit; 0 every call; -1 off */
/* The calipers' reads take at most 1/this of the time: the period stretches. */
#define HSR_CALIPER_COST_SHARE 100
HSR_HIDDEN uint64_t hsr_caliper_period(void);      /* ns until the next measured call */
/* The sampler thread arms the calipers every hsr_caliper_ns once they are active (a
 * layer attached); the next outermost MPI call disarms and is measured. */
extern HSR_HIDDEN _Atomic int hsr_calipers_active, hsr_caliper_armed, hsr_sampler_running;
HSR_HIDDEN _Atomic uint64_t *hsr_calipers_thread_calls(void);  /* this thread's call counter */
HSR_HIDDEN int hsr_read_memory(int64_t *rss, int64_t *pss);  /* smaps_rollup; pss -1 if unknown */
HSR_HIDDEN int hsr_read_rss(int64_t *rss);                   /* statm (cheap) */

/* ---- exec_env.c: the environment an exec'd child needs to be recorded ---- */
HSR_HIDDEN void hsr_exec_env_init(void);
HSR_HIDDEN size_t hsr_exec_env_slots(char *const envp[]);
HSR_HIDDEN size_t hsr_exec_env_bytes(char *const envp[]);
HSR_HIDDEN char *const *hsr_exec_env(char *const envp[], char **room, char *buf, size_t buflen);

/* ---- lifecycle.c: settings and state ---- */
struct hsr_settings {
    const char *output_dir;
    const char *stack_sizes;     /* as given, "" if none */
    const char *stack_regions;   /* as given, "" = all */
    uint32_t max_depth;
    uint32_t unwinder;           /* 0 dwarf, 1 frame pointers */
};
extern HSR_HIDDEN struct hsr_settings hsr_settings;
extern HSR_HIDDEN _Atomic int hsr_recording;       /* 0: hooks only forward */
extern HSR_HIDDEN uint64_t hsr_start_real_ns, hsr_start_mono_ns;
HSR_HIDDEN void hsr_init(void);                    /* idempotent */
HSR_HIDDEN void hsr_warn(const char *msg);          /* "heapscope: <msg>\n" on stderr */
HSR_HIDDEN void hsr_before_exec(void);
HSR_HIDDEN void hsr_before_exit_now(void);         /* _exit: dump if this process owns the file */
HSR_HIDDEN int hsr_signal_owned(int sig);          /* our handler is installed */
HSR_HIDDEN void hsr_signal_release(int sig);       /* the program takes the signal over */
HSR_HIDDEN uint64_t hsr_now_ns(int clock);

/* ---- blocks.c, heap_accounting.c: watching every block (off by default) ----
 * With hsr_heap_watch set (by the timeline at init, and by tracking and trace
 * mode), every hook reports each block's birth and death (blocks.h), and the heap
 * in use is accounted per thread. Counts-only recording leaves it 0: the hooks
 * then pay one predictable branch. */
extern HSR_HIDDEN int hsr_heap_watch;
/* Bytes of heap in use now (summed over the threads' counters), and the part
 * allocated inside component calls. Usable sizes (malloc_usable_size of the next
 * allocator), or requested sizes when tracking is on (hsr_heap_measure_requested). */
HSR_HIDDEN void hsr_heap_in_use(int64_t *total, int64_t *component);
HSR_HIDDEN int hsr_heap_measure_requested(void);
/* counters.c: a thread table by its index (struct hsr_thread.index), NULL if none */
#define HSR_MAX_TABLES 65536u
HSR_HIDDEN struct hsr_thread *hsr_thread_at(uint32_t index);

/* ---- tracking.c, tracking_write.c: tracking mode (HEAPSCOPE_TRACK=1) ----
 * A side table of live blocks and, per stack trace type (selected sizes) or per
 * size (the others), lifetimes, temporaries, blocks live at the peak and at the
 * snapshot (profile_format.h, TRACK_* chunks). */
extern HSR_HIDDEN int hsr_track_on;
HSR_HIDDEN void hsr_tracking_init(void);                /* HEAPSCOPE_TRACK*: idempotent */
HSR_HIDDEN void hsr_tracking_write(struct hsr_buf *b);   /* TRACK_* chunks of a snapshot */

/* ---- trace.c, trace_writer.c: event trace mode (HEAPSCOPE_TRACE=1) ---- */
extern HSR_HIDDEN int hsr_trace_on;
HSR_HIDDEN void hsr_trace_init(void);                    /* HEAPSCOPE_TRACE: idempotent */
/* Before a snapshot: every buffered event into the file. final: the process ends. */
HSR_HIDDEN void hsr_trace_flush(int final, int from_signal);
/* fast_clock.c: CLOCK_MONOTONIC ns from the TSC when the kernel uses it */
HSR_HIDDEN void hsr_fast_clock_init(void);
HSR_HIDDEN void hsr_fast_clock_refine(void);   /* the sampler thread, about once a second */

#endif
