/* hsmalloc internals: what the allocator's source files share, the data structures
 * (structs.h) and the functions and fast paths between the files.
 *
 *   segment (2 MiB, aligned)  header | page table | 31 slices of 64 KiB
 *   page                      run of slices; small: blocks of one class, large: 1 block
 *   heap                      per-thread owner of segments and pages (an object, not
 *                             the thread: abandoned at thread exit, adopted by the next)
 *   huge block                its own mapping, the header in its first 4 KiB page
 *
 * Free lists per page: `free` (allocating from; the owner's frees go on top, so the
 * block freed last is reused first, still in cache) and `local_free` (blocks come
 * back from other threads: cold, used once `free` is empty). Frees from other
 * threads first wait in the freeing thread's per-class cache (reused there), then
 * go in batches to the owning *heap's* remote queue (an atomic stack) that the
 * owner drains on its slow path.
 */
#ifndef HSM_INTERNAL_H
#define HSM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

#define HSM_LIKELY(x)   __builtin_expect(!!(x), 1)
#define HSM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HSM_HIDDEN      __attribute__((visibility("hidden")))
#define HSM_EXPORT      __attribute__((visibility("default")))
/* An exported glibc name for an internal function (defined beside its target). */
#define HSM_ALIAS(name, target) \
  extern __typeof__(target) name __attribute__((alias(#target), visibility("default")))

#include "primitives.h" /* counters and compares of one instruction */

/* Zeroed arrays of a few KiB or more (the registry, buffers, tables used by options few
 * set): kept after the small variables, in x86-64's large-data .lbss, which the linker
 * puts after .bss. A page of .bss is resident once anything on it is written; between
 * the arrays, the variables every process writes at start were spread over twice as
 * many pages. Zero-initialized variables only. */
#if defined(__x86_64__)
#define HSM_BIG_BSS __attribute__((section(".lbss.hsm")))
#else
#define HSM_BIG_BSS
#endif

#include "structs.h" /* block, page, segment, huge header, heap, statistics, options */

HSM_HIDDEN extern hsm_global_stats_t hsm_gstats;
HSM_HIDDEN extern hsm_options_t hsm_options;
HSM_HIDDEN extern _Atomic(uint8_t) hsm_registry[HSM_REGISTRY_SIZE];
/* The thread's heap; &hsm_heap_empty (whose fast_direct holds only hsm_page_empty) until
 * the thread's first allocation, so that malloc's fast path needs no NULL test. */
HSM_HIDDEN extern __thread hsm_heap_t *hsm_tls_heap __attribute__((tls_model("initial-exec")));
HSM_HIDDEN extern hsm_page_t hsm_page_empty;
HSM_HIDDEN extern hsm_heap_t hsm_heap_empty;
/* The thread pointer (the TCB's self pointer, %fs:0 on x86-64): unique among live
 * threads, read in one instruction (a chain's owner, chain.h). */
static inline __attribute__((always_inline)) void *hsm_thread_self(void) {
#if defined(__x86_64__)
  void *tp;
  __asm__("movq %%fs:0, %0" : "=r"(tp));
  return tp;
#else
  return __builtin_thread_pointer();
#endif
}
static inline hsm_heap_t *hsm_tls_heap_or_null(void) {
  hsm_heap_t *h = hsm_tls_heap;
  return h == &hsm_heap_empty ? NULL : h;
}

/* ---- size classes (sizeclass.c) ---- */
HSM_HIDDEN extern uint8_t hsm_class_table[HSM_TABLE8]; /* the fixed classes */
HSM_HIDDEN extern size_t hsm_class_size[HSM_CLASSES];
HSM_HIDDEN extern uint8_t hsm_class_slices[HSM_CLASSES];
HSM_HIDDEN extern uint32_t hsm_cache_limit[HSM_CLASSES];
/* the range of class8 indexes (sizes up to HSM_CLASS_TABLE_MAX) each class serves */
HSM_HIDDEN extern uint16_t hsm_class_lo8[HSM_CLASSES], hsm_class_hi8[HSM_CLASSES];
/* The 24, 40, ... 120-byte classes serve malloc (HSMALLOC_PACKED, fixed at start-up). */
HSM_HIDDEN extern int hsm_packed;
HSM_HIDDEN extern int hsm_packed_new; /* and operator new too (HSMALLOC_PACKED=all) */
/* malloc takes the packed classes too (HSMALLOC_PACKED=1 or all); by default it is
 * 16-byte aligned as glibc's is (Eigen, for one, asserts it) */
HSM_HIDDEN extern int hsm_malloc_packed;
/* The size whose class serves malloc(size): 16k+1 .. 16k+8 (up to 120) rounded up to
 * 16k+16 while malloc is 16-byte aligned. */
static inline size_t hsm_malloc_csize(size_t size) {
  if (hsm_malloc_packed || size - 17 >= 104 || ((size - 1) & 8) != 0) return size;
  return (size + 15) & ~(size_t)15;
}
HSM_HIDDEN void hsm_class_set_size(size_t cls, size_t size);
HSM_HIDDEN void hsm_sizeclass_init(void);
HSM_HIDDEN size_t hsm_class_of_computed(size_t size);

static inline size_t hsm_class_of(size_t size) {
  if (HSM_LIKELY(size <= HSM_CLASS_TABLE_MAX)) return hsm_class_table[(size + 7) >> 3];
  return hsm_class_of_computed(size);
}
/* The big hot class (above HSM_CLASS_TABLE_MAX) installed in heap that serves `size`
 * (its block size rounded down to 16 is below size), or 0: the classes' block sizes are
 * multiples of 16, so one compare of size / 16 rounded up a class (a size near
 * SIZE_MAX wraps to a key below any class's). */
static inline size_t hsm_hot_big_class(const hsm_heap_t *heap, size_t size) {
  uint32_t n = heap->hot_big_n;
  size_t key = (size + 15) >> 4;
  for (uint32_t i = 0; i < n; i++)
    if (heap->hot_big_key[i] == key) return heap->hot_big_cls[i];
  return 0;
}
/* The class serving `size` (at most HSM_SMALL_MAX) in this heap: a hot class where one
 * is installed. */
static inline size_t hsm_heap_class_of(const hsm_heap_t *heap, size_t size) {
  if (HSM_LIKELY(size <= HSM_CLASS_TABLE_MAX)) return heap->class8[(size + 7) >> 3];
  size_t hot = HSM_UNLIKELY(heap->hot_big_n != 0) ? hsm_hot_big_class(heap, size) : 0;
  return hot ? hot : hsm_class_of_computed(size);
}

/* ---- OS and registry (os.c) ---- */
HSM_HIDDEN void *hsm_os_map_aligned(size_t size, size_t align);
HSM_HIDDEN void hsm_os_unmap(void *p, size_t size);
HSM_HIDDEN void hsm_os_purge(void *p, size_t size);

/* ---- the clock (clock.c) ---- */
HSM_HIDDEN void hsm_clock_init(void);
HSM_HIDDEN uint64_t hsm_now_ms(void);

/* Fork handlers, registered as pthread_atfork does. pthread_atfork is a stub linked
 * in from libc_nonshared.a, so it lands after all of the library's own code, on the
 * last 64 KiB of its text, which the kernel would map for that one call (clock.c
 * says why a page costs 64 KiB); __register_atfork is the libc function the stub
 * calls (glibc's ABI since 2.3.2, in the LSB). */
extern void *__dso_handle __attribute__((weak, visibility("hidden")));
int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void), void *dso);
static inline void hsm_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) {
  __register_atfork(prepare, parent, child, &__dso_handle == NULL ? NULL : __dso_handle);
}

/* The bits set in x. __builtin_popcount without the popcnt instruction (not in the
 * x86-64 baseline) calls libgcc's __popcountdi2, linked after the library's own code,
 * like pthread_atfork above: this is as short and stays on the caller's page. */
static inline int hsm_popcount(uint32_t x) {
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  x = (x + (x >> 4)) & 0x0f0f0f0fu;
  return (int)((x * 0x01010101u) >> 24);
}
HSM_HIDDEN void hsm_stat_add(_Atomic int64_t *now, _Atomic int64_t *peak, int64_t delta);

static inline unsigned hsm_registry_kind(const void *p) {
  uintptr_t unit = (uintptr_t)p >> HSM_SEGMENT_SHIFT;
  if (HSM_UNLIKELY(unit >= HSM_REGISTRY_SIZE)) return HSM_REG_NONE;
  return atomic_load_explicit(&hsm_registry[unit], memory_order_relaxed);
}
static inline void hsm_registry_set(const void *p, unsigned kind) {
  atomic_store_explicit(&hsm_registry[(uintptr_t)p >> HSM_SEGMENT_SHIFT], (uint8_t)kind,
                        memory_order_relaxed);
}

static inline hsm_segment_t *hsm_segment_of(const void *p) {
  return (hsm_segment_t *)((uintptr_t)p & ~(uintptr_t)HSM_SEGMENT_MASK);
}
/* The segment's slice table: its colour's row (structs.h). */
static inline hsm_page_t **hsm_slice_table(hsm_segment_t *seg) {
  return seg->slice_color[((uintptr_t)seg >> HSM_SEGMENT_SHIFT) & (HSM_SLICE_COLORS - 1)];
}
static inline hsm_page_t *hsm_page_of(hsm_segment_t *seg, const void *p) {
  size_t slice = ((uintptr_t)p - (uintptr_t)seg) >> HSM_SLICE_SHIFT;
  return hsm_slice_table(seg)[slice];
}
/* Start of the block holding p (p may point inside it after an aligned allocation). */
static inline hsm_block_t *hsm_block_start(const hsm_page_t *pg, const void *p) {
  size_t off = (size_t)((const uint8_t *)p - pg->start);
  return (hsm_block_t *)(pg->start + off - off % pg->block_size);
}

#include "check.h" /* hardening: the block-start bound, free marks, secure mode */

/* ---- segments (segment.c) ---- */
HSM_HIDDEN hsm_page_t *hsm_segment_page_alloc(hsm_heap_t *heap, size_t slices);
/* a small class's page: where its last one was when that is free and resident */
HSM_HIDDEN hsm_page_t *hsm_segment_page_alloc_class(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_segment_page_free(hsm_heap_t *heap, hsm_page_t *pg);
/* placement.c: a placement of n slices costs the fresh slices it touches (each is
 * resident memory the process did not have), has the 4 KiB pages its touched slices
 * hold resident (hsm_segment_t.resident), and lies in a free run of len slices. */
typedef struct {
  unsigned fresh, res, len;
} hsm_run_cost_t;
#define HSM_SLICE_PAGES ((unsigned)(HSM_SLICE_SIZE / 4096))
HSM_HIDDEN int hsm_place_run(uint32_t mask, uint32_t touched, const uint8_t *resident, unsigned n,
                             hsm_run_cost_t *c);
HSM_HIDDEN int hsm_place_better(const hsm_run_cost_t *a, const hsm_run_cost_t *b);
HSM_HIDDEN void hsm_place_note_resident(hsm_segment_t *seg, const hsm_page_t *pg, size_t first);
HSM_HIDDEN int hsm_segment_page_resize(hsm_heap_t *heap, hsm_page_t *pg, size_t slices);
HSM_HIDDEN void *hsm_segment_page_slide(hsm_heap_t *heap, hsm_page_t *pg, size_t slices);
HSM_HIDDEN void hsm_segment_decay(hsm_heap_t *heap, uint64_t now);
HSM_HIDDEN void hsm_segment_decay_slices(hsm_heap_t *heap, uint64_t now, int force);
HSM_HIDDEN void hsm_segment_cache_decay(uint64_t now, int force);
HSM_HIDDEN void hsm_segment_cache_lock(void);
HSM_HIDDEN void hsm_segment_cache_unlock(void);
HSM_HIDDEN int64_t hsm_segment_cache_trim(int64_t want, uint64_t idle_before);
/* Fresh memory is being committed (`huge`: a huge block's, else a segment's): give
 * back as much resident idle memory (over a budget); hsm_offset_refault: memory it
 * gave back, idle since idle_since (ms), is committed again; hsm_offset_reused: such
 * memory was needed again (its refault counted elsewhere). */
HSM_HIDDEN void hsm_offset_growth(hsm_heap_t *heap, int64_t bytes, int huge);
HSM_HIDDEN void hsm_offset_refault(int64_t bytes, uint64_t idle_since);
HSM_HIDDEN void hsm_offset_reused(uint64_t idle_since);
/* A large block of `heap` is going back to its segment: the same budget kept when the
 * program shrinks. The heap's resident free slices beyond it go back now, as glibc
 * trims its heap's top and unmaps a freed big chunk: a program that frees its big
 * buffers and goes on with little (GROMACS's last steps and its clean-up) held them
 * resident to its exit, the decay's 8 s being longer than its run. The block itself
 * stays resident, its slices not yet free (a program that frees and makes again a
 * buffer of one size, as GROMACS does three times at its end, reuses it; glibc too
 * keeps such a chunk after the first, raising its mmap threshold). */
static inline void hsm_offset_shrink(hsm_heap_t *heap) { hsm_offset_growth(heap, -1, 0); }

/* ---- pages (page.c), large blocks (large.c) ---- */
HSM_HIDDEN void *hsm_page_alloc_slow(hsm_heap_t *heap, size_t size, size_t cls, int zero);
/* The slow path's work: the class's empty cache refilled from its pages (0: no memory). */
HSM_HIDDEN int hsm_page_fill_cache(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_page_free_generic(hsm_heap_t *heap, hsm_page_t *pg, void *p);
HSM_HIDDEN void hsm_page_after_free(hsm_heap_t *heap, hsm_page_t *pg);
HSM_HIDDEN void hsm_heap_expire_idle(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_page_free_idle(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_page_free_unused(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_cache_release_unused(hsm_heap_t *heap, size_t cls);
/* A heap's allocation slow path for class cls (HSM_BIN_LARGE: a large block): counted,
 * and the empty pages of other big classes kept too long go back, and the caches
 * holding more than their class's live blocks send the excess home (cache.c). */
HSM_HIDDEN void hsm_cache_sweep_big(hsm_heap_t *heap);
HSM_HIDDEN void hsm_cache_trim(hsm_heap_t *heap);
HSM_HIDDEN extern _Atomic int hsm_heaps_several; /* the process has made a second heap */
static inline void hsm_heap_slow_tick(hsm_heap_t *heap, size_t cls) {
  if (HSM_UNLIKELY((++heap->slow_seq & (HSM_IDLE_PAGE_SLOW - 1)) == 0)) {
    hsm_cache_sweep_big(heap);
    hsm_cache_trim(heap);
  }
  if (HSM_UNLIKELY(heap->idle_pages != 0)) hsm_heap_expire_idle(heap, cls);
}
HSM_HIDDEN void hsm_page_free_block(hsm_heap_t *heap, hsm_page_t *pg, hsm_block_t *b);
/* A run of n blocks of page pg (its heap's; head .. tail, linked as they came, marked
 * free, default mode) back onto its list in one step: its count of blocks out down by
 * n (a parked full page goes back on its queue, an empty one may go back). */
HSM_HIDDEN void hsm_page_return_run(hsm_heap_t *heap, hsm_page_t *pg, hsm_block_t *head,
                                    hsm_block_t *tail, uint32_t n);
HSM_HIDDEN void hsm_page_release(hsm_heap_t *heap, hsm_page_t *pg);
/* ---- free blocks of the big classes given back beyond a reserve (purge.c) ---- */
HSM_HIDDEN int hsm_purge_class(size_t cls); /* a page of this class purges */
HSM_HIDDEN uint32_t hsm_purge_reserve_of(size_t cls);
HSM_HIDDEN void hsm_purge_reserves(hsm_heap_t *heap);
/* per class: the resident free blocks a heap keeps (sizeclass.c sets it with the class's
 * size) */
HSM_HIDDEN extern uint32_t hsm_class_reserve[HSM_CLASSES];
/* A run of n blocks (head .. tail) home to purging page pg: onto `local_free` while
 * the class's reserve has room, the rest purged onto `purged` (the caller counts them
 * in `used`). */
HSM_HIDDEN void hsm_purge_home(hsm_heap_t *heap, hsm_page_t *pg, hsm_block_t *head,
                               hsm_block_t *tail, uint32_t n);
HSM_HIDDEN void hsm_purge_leave(hsm_heap_t *heap, hsm_page_t *pg);
HSM_HIDDEN void hsm_purge_enter(hsm_heap_t *heap, hsm_page_t *pg);
HSM_HIDDEN int hsm_purge_pass_over(hsm_heap_t *heap, hsm_page_t *pg);
HSM_HIDDEN void hsm_purge_idle_class(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN int hsm_purge_page_gone(hsm_heap_t *heap, const hsm_page_t *pg);
HSM_HIDDEN void hsm_purge_page_made(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_purge_page_placed(hsm_segment_t *seg, size_t first, size_t cls, uint32_t old);
HSM_HIDDEN hsm_block_t *hsm_checked_block(hsm_page_t *pg, void *p, const char *fn);
HSM_HIDDEN void hsm_heap_collect_empty(hsm_heap_t *heap);
HSM_HIDDEN void hsm_heap_free_empty_pages(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_page_set_direct(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_queue_remove(hsm_page_queue_t *q, hsm_page_t *pg);
HSM_HIDDEN void hsm_queue_push_front(hsm_page_queue_t *q, hsm_page_t *pg);
HSM_HIDDEN void *hsm_large_alloc(hsm_heap_t *heap, size_t size, int zero);
HSM_HIDDEN void *hsm_large_resize(void *p, size_t size);

/* ---- heaps and threads (heap.c), options (options.c) ---- */
HSM_HIDDEN hsm_heap_t *hsm_heap_get_slow(void);
HSM_HIDDEN hsm_heap_t *hsm_heap_absorb(hsm_heap_t *heap);
HSM_HIDDEN hsm_heap_t *hsm_heap_for_free(void);
HSM_HIDDEN void hsm_heap_maintenance(hsm_heap_t *heap);
HSM_HIDDEN void hsm_collect_abandoned(int force);
HSM_HIDDEN void hsm_heaps_lock(void);
HSM_HIDDEN void hsm_heaps_unlock(void);
HSM_HIDDEN hsm_heap_t *hsm_heaps_first(void);
HSM_HIDDEN void hsm_options_read(void);

/* ---- hot sizes and postponed free (hot.c) ---- */
HSM_HIDDEN void hsm_hot_heap_start(hsm_heap_t *heap);
HSM_HIDDEN void hsm_hot_apply_seeds(hsm_heap_t *heap);
HSM_HIDDEN void hsm_hot_sample(hsm_heap_t *heap, size_t size);
/* The block size of the hot class that would serve `size` (9..HSM_HOT_MAX_SIZE), and
 * the first 8-byte step such a class serves (its last is size / 8) */
HSM_HIDDEN size_t hsm_hot_class_size(size_t size, int packed);
HSM_HIDDEN unsigned hsm_hot_first_step(size_t class_size);
HSM_HIDDEN void hsm_hot_maintenance(hsm_heap_t *heap, uint64_t now);
HSM_HIDDEN int hsm_hot_keep(hsm_heap_t *heap, hsm_page_t *pg);
HSM_HIDDEN hsm_page_t *hsm_hot_take_kept(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN size_t hsm_hot_release_kept(hsm_heap_t *heap);
HSM_HIDDEN int hsm_hot_superseded(const hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_hot_lock(void);
HSM_HIDDEN void hsm_hot_unlock(void);
typedef struct {
  size_t size;       /* block size; 0: slot unused */
  int seeded;        /* from HSMALLOC_HOT_SIZES */
  _Atomic int heaps; /* heaps with the class installed now */
  _Atomic uint64_t promotions, retirements;
} hsm_hot_slot_t;
HSM_HIDDEN extern hsm_hot_slot_t hsm_hot_slots[HSM_HOT_SLOTS];
static inline int hsm_is_hot(size_t cls) { return cls >= HSM_FIXED_CLASSES && cls < HSM_LANE_BASE; }

/* ---- call-site lanes (site.c; the fast path is operator new's, cxx.c) ---- */
/* The fixed class a lane class copies. */
static inline size_t hsm_lane_fixed_class(size_t cls) {
  return (cls - HSM_LANE_BASE) % HSM_SITE_LANE_CLASSES;
}
/* Call site `pc` missed slot `slot` of the heap's table: remember it with the next lane
 * of the class of `size`; returns what the slot now holds (site_base). */
HSM_HIDDEN unsigned hsm_site_learn(hsm_heap_t *heap, unsigned slot, uintptr_t pc, size_t size);
/* A known site of lane 1 or up asks for `size` (up to HSM_SITE_MAX): the class of it in
 * the site's lane, for the fast path. */
HSM_HIDDEN void hsm_site_resize(hsm_heap_t *heap, unsigned slot, size_t size);
/* What a lane-0 slot keeps for new's fast path (HSM_SITE_MALLOC or HSM_SITE_PLAIN). */
HSM_HIDDEN uint8_t hsm_site_lane0(const hsm_heap_t *heap, unsigned slot);
/* Whether operator new may use lanes in this heap (no secure mode, no default chain). */
HSM_HIDDEN void hsm_site_lanes_update(hsm_heap_t *heap);
/* by site_row + (size + 7) / 8 up to HSM_SITE_MAX: the fixed class serving new of a site
 * (row 0 as hsm_class_table, row HSM_SITE_ROW rounded up to 16); filled by
 * hsm_site_init after the size classes */
#define HSM_SITE_ROW (HSM_SITE_MAX / 8 + 1)
HSM_HIDDEN extern uint8_t hsm_site_class[2 * HSM_SITE_ROW];
HSM_HIDDEN void hsm_site_init(void);
/* module.c: 1 if the module holding pc was built by GCC only (its ELF .comment), so
 * that new may give it 8-byte aligned blocks; allocates nothing. `memo` (the caller's)
 * answers for the same module again without a lock while no dlclose intervened. */
HSM_HIDDEN int hsm_module_new_packed(uintptr_t pc, hsm_module_memo_t *memo);
HSM_HIDDEN extern _Atomic unsigned long hsm_module_unloads; /* dlcloses: memos stale */
/* every heap forgets the call sites in [lo, hi) (code dlclose unloaded: module.c) */
HSM_HIDDEN void hsm_sites_forget(uintptr_t lo, uintptr_t hi);

/* ---- the thread cache (cache.c), other heaps' blocks (remote.c) ---- */
/* the thread allocates class cls from its empty cache: the cache's whole bound */
HSM_HIDDEN void hsm_cache_grow(hsm_heap_t *heap, size_t cls);
/* How many blocks an empty cache takes from its page at a refill. */
HSM_HIDDEN uint32_t hsm_cache_refill_count(const hsm_page_t *cache);
/* no room for b (of pg, marked free and counted) in its class's cache: the cache is
 * flushed, then b pushed */
HSM_HIDDEN void hsm_cache_overflow(hsm_heap_t *self, hsm_page_t *pg, hsm_block_t *b);
HSM_HIDDEN void hsm_cache_flush_class(hsm_heap_t *heap, size_t cls);
HSM_HIDDEN void hsm_cache_flush_all(hsm_heap_t *heap);
/* Every batch of the transfer cache home, through this heap (hsmalloc_collect). */
HSM_HIDDEN void hsm_cache_flush_transfer(hsm_heap_t *heap);
/* ---- the transfer cache (transfer.c): whole batches of a class between threads ---- */
HSM_HIDDEN extern _Atomic int hsm_transfer_on; /* the process has made a second heap */
HSM_HIDDEN int hsm_transfer_put(hsm_heap_t *self, size_t cls, uint32_t count);
HSM_HIDDEN uint32_t hsm_transfer_take(hsm_heap_t *self, size_t cls, int wait);
HSM_HIDDEN uint32_t hsm_transfer_blocks(size_t cls);
HSM_HIDDEN uint32_t hsm_segment_free_resident(hsm_heap_t *heap, uint32_t enough);
HSM_HIDDEN void hsm_transfer_lock_all(void);
HSM_HIDDEN void hsm_transfer_unlock_all(void);
/* b (marked free) onto the cache, which has room for it (the link encoded: secure mode) */
static inline __attribute__((always_inline)) void hsm_cache_push(hsm_page_t *cache,
                                                                 hsm_block_t *b) {
  cache->used--;
  b->next = (hsm_block_t *)((uintptr_t)cache->free ^ hsm_remote_key);
  cache->free = b;
}
/* secure mode's free that failed a check, or whose cache has no room, or whose thread
 * has no heap: free.c */
HSM_HIDDEN void hsm_secure_free_slow(hsm_page_t *pg, hsm_block_t *b);
/* free of a small block of a secure page pg whose pointer is a block start among the
 * carved ones (the generic path took the others): the double-free check, the canary,
 * then onto this thread's cache as the default mode's fast path does, link encoded.
 * Every test comes before any write and fails into hsm_secure_free_slow with a tail
 * call (no stack frame here): a failed check goes on to the generic path, which makes
 * the same checks and says which failed; a thread without a heap (hsm_heap_empty's
 * caches have no room) takes the generic path too. Inlined into free's slow path
 * (free.c): a call of its own cost 5 instructions. */
static inline __attribute__((always_inline)) void hsm_secure_free(hsm_page_t *pg, hsm_block_t *b) {
  hsm_page_t *cache = (hsm_page_t *)((uint8_t *)hsm_tls_heap + pg->cache_off);
  if (HSM_UNLIKELY(b->mark == hsm_secure_mark(b) || !hsm_canary_ok(b, pg->block_size) ||
                   cache->used <= 1)) {
    hsm_secure_free_slow(pg, b);
    return;
  }
  b->mark = hsm_secure_mark(b);
  HSM_COUNT(cache->frees, 1);
  hsm_cache_push(cache, b);
}
/* Free a block of another heap through a per-destination batch (large blocks, and
 * frees by a thread that has no cache: `self` NULL pushes it alone). */
HSM_HIDDEN void hsm_remote_free(hsm_heap_t *self, hsm_page_t *pg, hsm_block_t *b);
/* A run of n blocks (head .. tail, linked) of heap dest's pages into its batch. */
HSM_HIDDEN void hsm_rbatch_add_run(hsm_heap_t *self, hsm_heap_t *dest, hsm_block_t *head,
                                   hsm_block_t *tail, uint32_t n, size_t bytes);
HSM_HIDDEN void hsm_rbatch_flush_all(hsm_heap_t *heap);
HSM_HIDDEN void hsm_heap_drain_remote(hsm_heap_t *heap);

/* Make pg the class's current page: the page the cache refills from (secure mode: the
 * page malloc pops from). */
static inline void hsm_direct_set(hsm_heap_t *heap, size_t cls, hsm_page_t *pg) {
  heap->direct[cls] = pg;
}
/* fast_direct: each class's cache, or hsm_page_empty everywhere while the fast path must
 * miss (a hot-size window, a default chain, secure mode; heap.c). */
HSM_HIDDEN void hsm_fast_direct_refresh(hsm_heap_t *heap);

/* An allocation's two counters, allocs[cls] += 1 and requested[cls] += size: on x86-64
 * each one `add` addressed from the heap and the class (the compiler computes the
 * address of each apart, one instruction more). malloc's and new's fast paths. */
static inline __attribute__((always_inline)) void hsm_count_class(hsm_heap_t *heap, size_t cls,
                                                                  size_t size) {
#if defined(__x86_64__)
  __asm__ volatile(
      "addq $1, %c[a](%[h],%[c],8)\n\taddq %[n], %c[r](%[h],%[c],8)"
      :
      : [h] "r"(heap), [c] "r"(cls), [n] "r"(size), [a] "i"(offsetof(hsm_heap_t, stats.allocs)),
        [r] "i"(offsetof(hsm_heap_t, stats.requested))
      : "memory");
#else
  HSM_COUNT(heap->stats.allocs[cls], 1);
  HSM_COUNT(heap->stats.requested[cls], size);
#endif
}

/* Pop the first block of the class's cache (not empty) for a request of `size` in class
 * `cls`: the list pop, the counters, and zeroing for calloc where the block is not fresh
 * OS memory. The default mode's (secure mode has its own: secure.c). Shared by the
 * generic fast path and the slow path; hsm_malloc's leaf has its own copy without
 * zeroing. */
static inline __attribute__((always_inline)) void *hsm_page_pop(hsm_heap_t *heap, hsm_page_t *pg,
                                                                size_t cls, size_t size, int zero) {
  hsm_block_t *b = pg->free;
  /* fresh zeroed OS memory: a block never handed out (its mark is its page's address
   * with the fresh bit: page_extend) of a page carved from zeroed memory */
  int fresh = zero && (b->mark & HSM_MARK_FRESH) &&
              ((const hsm_page_t *)(b->mark - HSM_MARK_FRESH))->span_zero;
  pg->free = b->next;
  b->mark = 0;
  pg->used++;
  HSM_COUNT(heap->stats.allocs[cls], 1);
  HSM_COUNT(heap->stats.requested[cls], size);
  if (zero) {
    if (fresh) b->next = NULL;
    else memset(b, 0, size);
  }
  return b;
}

static inline hsm_heap_t *hsm_heap_get(void) {
  hsm_heap_t *heap = hsm_tls_heap;
  if (HSM_LIKELY(heap != &hsm_heap_empty)) return heap;
  return hsm_heap_get_slow();
}

/* ---- huge blocks (huge.c) ---- */
/* *dirty: the bytes from the block's start that may hold old contents (0: all zero) */
HSM_HIDDEN void *hsm_huge_alloc(size_t size, size_t align, size_t *dirty);
HSM_HIDDEN void hsm_huge_cache_decay(uint64_t now, int force);
HSM_HIDDEN int64_t hsm_huge_cache_trim(int64_t want, uint64_t idle_before);
HSM_HIDDEN void hsm_huge_cache_lock(void);
HSM_HIDDEN void hsm_huge_cache_unlock(void);
HSM_HIDDEN void hsm_huge_free(hsm_huge_t *h);
HSM_HIDDEN int hsm_huge_shrink(void *p, size_t size);
HSM_HIDDEN void *hsm_huge_grow(void *p, size_t size);
HSM_HIDDEN hsm_huge_t *hsm_huge_of(const void *p, unsigned kind);

/* ---- core operations (alloc.c, free.c) ---- */
HSM_HIDDEN void *hsm_malloc(size_t size);
HSM_HIDDEN void *hsm_new_malloc(
    size_t size); /* operator new: 16-aligned unless HSMALLOC_PACKED=all */
HSM_HIDDEN void *hsm_calloc(size_t n, size_t size);
HSM_HIDDEN void *hsm_realloc(void *p, size_t size);
HSM_HIDDEN void hsm_free(void *p);
HSM_HIDDEN void *hsm_packed_alloc(size_t size); /* the packed classes' malloc (operator new) */
HSM_HIDDEN void *hsm_memalign(size_t align, size_t size);
HSM_HIDDEN size_t hsm_usable_size(const void *p);
HSM_HIDDEN int hsm_realloc_owned(void *p); /* hsm_owns, after free's checks */
HSM_HIDDEN int hsm_owns(const void *p);

static inline int hsm_is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* Text without libc's formatting and conversion code (vfprintf, strtol: hundreds of KiB
 * of libc pages a process would map just for hsmalloc's readings of /proc and /sys,
 * mimalloc-bench's small programs' max RSS): the decimal number at s (optional '-'),
 * *end after it (s when there is none); and a, b, c joined into dst (cap bytes). */
static inline long long hsm_parse_dec(const char *s, const char **end) {
  const char *p = s;
  int neg = *p == '-';
  if (neg) p++;
  unsigned long long v = 0;
  const char *digits = p;
  while (*p >= '0' && *p <= '9') {
    if (v < (1ull << 62)) v = v * 10 + (unsigned long long)(*p - '0');
    p++;
  }
  *end = p == digits ? s : p;
  return neg ? -(long long)v : (long long)v;
}
static inline void hsm_join(char *dst, size_t cap, const char *a, const char *b, const char *c) {
  size_t n = 0;
  const char *parts[3] = {a, b, c};
  for (int k = 0; k < 3; k++)
    for (const char *q = parts[k]; q != NULL && *q && n + 1 < cap; q++) dst[n++] = *q;
  dst[n] = '\0';
}

/* ---- pointers we do not own (foreign.c) ---- */
HSM_HIDDEN void hsm_foreign_free(void *p);
HSM_HIDDEN size_t hsm_foreign_usable_size(void *p);

/* ---- chains reached through the glibc API (chain_api.c), off the fast paths ---- */
/* p's unit is HSM_REG_CHAIN_*: free p if it is a chain's block (returns
 * HSM_REG_CHAIN_BLOCK), else return the kind the rest of the unit has. */
HSM_HIDDEN unsigned hsm_chain_free_routed(void *p, unsigned kind);
/* The same for the usable size: *kind becomes HSM_REG_CHAIN_BLOCK or the prior kind. */
HSM_HIDDEN size_t hsm_chain_usable_routed(const void *p, unsigned *kind);
HSM_HIDDEN void *hsm_chain_realloc_routed(void *p, size_t size, unsigned kind, int *done);
HSM_HIDDEN void *hsm_chain_alloc_default(struct hsmalloc_chain *c, size_t size, int zero);
HSM_HIDDEN void *hsm_chain_memalign_default(struct hsmalloc_chain *c, size_t align, size_t size);
HSM_HIDDEN void hsm_chain_thread_exit(hsm_heap_t *heap);
static inline int hsm_is_chain_kind(unsigned kind) {
  return kind == HSM_REG_CHAIN_SEG || kind == HSM_REG_CHAIN_MAP;
}

/* ---- statistics (stats.c), the SIGUSR2 dump (stats_signal.c) ---- */
HSM_HIDDEN void hsm_stats_at_exit(void);
/* hsmalloc_stats_get's work; `nonblocking`: only try the locks (a signal handler),
 * -1 when one is taken. */
HSM_HIDDEN int hsm_stats_collect(void *st, int nonblocking);
HSM_HIDDEN int hsm_heaps_trylock(void);
/* Heap number `index`'s hsmalloc_heap_stats_t, with the heap list locked; -1: none. */
HSM_HIDDEN int hsm_heap_row_locked(size_t index, void *row);
/* One heap's figures as an hsmalloc_stats_t (for hsmalloc_chain_stats of a chain that
 * has a heap of its own); allocated_now and overhead_bytes are left 0 (a heap's live
 * bytes are not known: frees are counted by the freeing thread). */
HSM_HIDDEN void hsm_stats_heap_fill(hsm_heap_t *h, void *st);
/* Chains (chain*.c) list themselves for the JSON dumps ("chains": [...]) by defining
 * it: 0 and *out, its number and name for the chain after *iter (NULL: the first),
 * non-zero past the last. A weak symbol: without chains, there is no such list. */
HSM_HIDDEN int hsm_chain_stats_next(void **iter, void *out, unsigned *id, char *name, size_t cap)
    __attribute__((weak));
/* Around a walk with hsm_chain_stats_next: the live-chain list is held (chains are not
 * created or destroyed meanwhile). `nonblocking` (a signal handler): only tried, -1
 * when taken. */
HSM_HIDDEN int hsm_chains_lock(int nonblocking) __attribute__((weak));
HSM_HIDDEN void hsm_chains_unlock(void) __attribute__((weak));
/* The node the chain holding p is bound to, -1: none or not a chain's block. */
HSM_HIDDEN int hsm_chain_node_of(const void *p) __attribute__((weak));
/* A dump asked for by SIGUSR2 that could not be written in the handler (a lock was
 * taken): written here, on the next maintenance. The flag is tested inline, so that
 * stats_json.c's code (near the end of the library's text) is run only to dump. */
HSM_HIDDEN extern _Atomic int hsm_stats_signal_flag;
HSM_HIDDEN void hsm_stats_signal_dump(void);
static inline void hsm_stats_signal_pending(void) {
  if (HSM_UNLIKELY(atomic_load_explicit(&hsm_stats_signal_flag, memory_order_relaxed)))
    hsm_stats_signal_dump();
}

/* ---- the event trace (trace.c) ---- */
enum {
  HSM_EV_SEG_NEW,
  HSM_EV_SEG_REUSE,
  HSM_EV_SEG_FREE,
  HSM_EV_PAGE_NEW,
  HSM_EV_PAGE_FREE,
  HSM_EV_PURGE,
  HSM_EV_MAP,
  HSM_EV_UNMAP,
  HSM_EV_PRESSURE
};
HSM_HIDDEN extern int hsm_trace_on;
HSM_HIDDEN void hsm_trace_start(void);
HSM_HIDDEN void hsm_trace_event(int kind, const hsm_heap_t *heap, const void *addr, uint64_t bytes);
HSM_HIDDEN void hsm_trace_flush(void);
#define HSM_TRACE(kind, heap, addr, bytes)                                    \
  do {                                                                        \
    if (HSM_UNLIKELY(hsm_trace_on)) hsm_trace_event(kind, heap, addr, bytes); \
  } while (0)

#include "pressure_numa.h" /* memory pressure (pressure.c), NUMA placement (numa.c) */

#endif
