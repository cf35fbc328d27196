/* Heaps and threads: initialization, one heap per thread (adopted from an exited
 * thread when one is free), abandonment at thread exit, reclaiming abandoned heaps,
 * periodic maintenance, and fork safety. Remote frees are in remote.c.
 *
 * Lock order (fork takes them all in this order): heaps_lock, the segment cache
 * lock, the huge cache lock, the hot slot lock. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/* The heap of a thread that has none yet: all zeros, so that it lives in .bss (no
 * relocation writes it at load, nothing makes it resident). Every path that may meet
 * it turns away on a zero before reading a page: malloc's fast path on fast_lim,
 * secure mode's on secure_lim, new's on the empty site table, free's on a cache with
 * no room (`used` 0). */
HSM_BIG_BSS hsm_heap_t hsm_heap_empty;
__thread hsm_heap_t *hsm_tls_heap __attribute__((tls_model("initial-exec"))) = &hsm_heap_empty;
static __thread int tls_exiting __attribute__((tls_model("initial-exec")));

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int init_done;
static pthread_key_t heap_key;

static pthread_mutex_t heaps_lock = PTHREAD_MUTEX_INITIALIZER;
static hsm_heap_t *heaps_all; /* every heap, newest first */
static hsm_heap_t *heaps_abandoned;
static _Atomic int abandoned_count;
static _Atomic uint32_t abandonments; /* ever: a swap looks again only after one */
static uint32_t heaps_made;
static uint8_t *heap_pool; /* bump area for heap objects */
static size_t heap_pool_left;

_Atomic int hsm_heaps_several; /* the process has made a second heap */

void hsm_heaps_lock(void) { pthread_mutex_lock(&heaps_lock); }
void hsm_heaps_unlock(void) { pthread_mutex_unlock(&heaps_lock); }
int hsm_heaps_trylock(void) { return pthread_mutex_trylock(&heaps_lock) == 0; }
hsm_heap_t *hsm_heaps_first(void) { return heaps_all; }

static void heap_thread_exit(void *arg);

/* a thread's first allocation slow paths on a heap, in which it may swap the heap for a
 * bigger abandoned one (hsm_heap_absorb) */
#define HSM_ABSORB_SLOW 64

/* Nothing here may allocate: this runs inside the first malloc of the process. */
static void hsm_init(void) {
  pthread_mutex_lock(&init_lock);
  if (!atomic_load(&init_done)) {
    hsm_clock_init();
    hsm_options_read();
    hsm_pressure_init();
    hsm_check_init();
    hsm_sizeclass_init();
    pthread_key_create(&heap_key, heap_thread_exit);
    atomic_store(&init_done, 1);
  }
  pthread_mutex_unlock(&init_lock);
}

static hsm_heap_t *heap_new_locked(void) {
  size_t size = (sizeof(hsm_heap_t) + 63) & ~(size_t)63;
  if (heap_pool_left < size) {
    size_t chunk = HSM_HEAP_POOL_CHUNK;
    void *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    heap_pool = p;
    heap_pool_left = chunk;
  }
  hsm_heap_t *heap = (hsm_heap_t *)heap_pool;
  heap_pool += size;
  heap_pool_left -= size;
  memcpy(heap->class8, hsm_class_table, sizeof heap->class8);
  for (size_t i = 0; i <= HSM_CLASS_TABLE_MAX; i++) /* malloc's: 16-aligned by default */
    heap->fast_class[i] = heap->class8[(hsm_malloc_csize(i) + 7) >> 3];
  for (size_t c = 0; c < HSM_CLASSES; c++) hsm_direct_set(heap, c, &hsm_page_empty);
  hsm_fast_direct_refresh(heap);
  hsm_site_lanes_update(heap);
  heap->id = heaps_made++;
  if (heap->id == 1) { /* threads may hand batches over; caches hold others' blocks */
    hsm_transfer_on = hsm_options.transfer;
    atomic_store_explicit(&hsm_heaps_several, 1, memory_order_relaxed);
  }
  heap->all_next = heaps_all;
  heaps_all = heap;
  return heap;
}

void hsm_fast_direct_refresh(hsm_heap_t *heap) {
  int miss_other = heap->sample_left || heap->chain, miss = hsm_secure || miss_other;
  for (size_t c = 0; c < HSM_CLASSES; c++)
    heap->fast_direct[c] = miss ? &hsm_page_empty : &heap->cache[c];
  heap->fast_lim = hsm_secure ? 0 : HSM_CLASS_TABLE_MAX + 1;
  heap->secure_lim = hsm_secure && !miss_other ? HSM_CLASS_TABLE_MAX - 23 : 0;
}

static void heap_own(hsm_heap_t *heap) {
  hsm_tls_heap = heap;
  pthread_setspecific(heap_key, heap);
  hsm_hot_heap_start(heap);
}

hsm_heap_t *hsm_heap_get_slow(void) {
  if (!atomic_load_explicit(&init_done, memory_order_acquire)) hsm_init();
  int err = errno;
  pthread_mutex_lock(&heaps_lock);
  hsm_heap_t *heap = heaps_abandoned;
  if (heap != NULL) {
    heaps_abandoned = heap->abandoned_next;
    heap->abandoned_next = NULL;
    atomic_fetch_sub(&abandoned_count, 1);
  }
  if (heap == NULL) heap = heap_new_locked();
  if (heap != NULL) {
    heap->absorb_left = HSM_ABSORB_SLOW;
    heap->absorb_seen = atomic_load_explicit(&abandonments, memory_order_relaxed) - 1;
    heap->state = HSM_HEAP_OWNED;
    heap->slow_until_decay = HSM_DECAY_EVERY_SLOW;
  }
  pthread_mutex_unlock(&heaps_lock);
  if (heap == NULL) return NULL;
  heap_own(heap);
  errno = err;
  return heap;
}

/* The heap a free should be counted in and batch through: a thread that only frees
 * gets one too, except while it exits (its heap is already abandoned). */
hsm_heap_t *hsm_heap_for_free(void) {
  hsm_heap_t *heap = hsm_tls_heap_or_null();
  if (heap == NULL && !tls_exiting) heap = hsm_heap_get_slow();
  return heap;
}

/* ---- thread exit, abandoned heaps ---- */

static void heap_tidy(hsm_heap_t *heap) {
  hsm_heap_drain_remote(heap);
  hsm_heap_collect_empty(heap);
}

/* What a thread leaves in its heap before giving it up: its cache's blocks back to
 * their pages (others' home), its batches pushed, its queue drained. */
static void heap_leave(hsm_heap_t *heap) {
  hsm_cache_flush_all(heap);
  hsm_rbatch_flush_all(heap);
  heap_tidy(heap);
}

static void abandon_locked(hsm_heap_t *heap) {
  heap->state = HSM_HEAP_ABANDONED;
  heap->abandoned_next = heaps_abandoned;
  heaps_abandoned = heap;
  atomic_fetch_add(&abandoned_count, 1);
  atomic_fetch_add_explicit(&abandonments, 1, memory_order_relaxed);
}

/* A thread adopts an abandoned heap only when it starts, and a thread that starts its
 * successor before it exits (larson's workers, a pool that replaces its threads) leaves
 * its heap to no one: the successor took another (made new, or one left abandoned
 * earlier), and each exit adds a heap of partly used pages that the next
 * starts cannot all take. So for its first HSM_ABSORB_SLOW allocation slow paths on a
 * heap, a thread swaps it for an abandoned heap whose pages hold more bytes: it takes
 * that heap whole (its pages, its queue: a remote free still on its way lands there as
 * on any adopted heap) and leaves its own abandoned in its place for the next thread.
 * New blocks go to the fuller heaps, the others empty as their blocks are freed (larson
 * swaps about 10 times a second, its heaps alike in size: max RSS 5-12% lower; a
 * bound of twice the bytes swapped never there). The heap the thread runs on afterwards
 * is hsm_tls_heap. */
hsm_heap_t *hsm_heap_absorb(hsm_heap_t *heap) {
  heap->absorb_left--;
  hsm_heap_t *take = NULL;
  /* the list is walked once per abandonment seen, not once per slow path */
  uint32_t seen = atomic_load_explicit(&abandonments, memory_order_relaxed);
  if (seen == heap->absorb_seen || heap->chain != NULL || hsm_secure ||
      atomic_load_explicit(&abandoned_count, memory_order_relaxed) == 0)
    return heap;
  if (!hsm_heaps_trylock()) return heap;
  heap->absorb_seen = seen;
  int64_t mine = (int64_t)HSM_READ(heap->stats.page_bytes);
  hsm_heap_t **link = &heaps_abandoned;
  for (hsm_heap_t *h = heaps_abandoned; h != NULL;
       link = &h->abandoned_next, h = h->abandoned_next) {
    if ((int64_t)HSM_READ(h->stats.page_bytes) > mine) {
      take = h;
      break;
    }
  }
  if (take != NULL) {
    *link = take->abandoned_next;
    take->abandoned_next = NULL;
    take->state = HSM_HEAP_OWNED;
    take->slow_until_decay = HSM_DECAY_EVERY_SLOW;
    take->absorb_left = 0;
    heap->absorb_left = 0;
    atomic_fetch_sub(&abandoned_count, 1);
  }
  pthread_mutex_unlock(&heaps_lock);
  if (take == NULL) return heap;
  /* the smaller heap's leaving runs unlocked, as a thread exit's does (it may take the
   * transfer and segment cache locks); then it joins the abandoned list */
  heap_leave(heap);
  pthread_mutex_lock(&heaps_lock);
  abandon_locked(heap);
  pthread_mutex_unlock(&heaps_lock);
  heap_own(take);
  return take;
}

static void heap_thread_exit(void *arg) {
  hsm_heap_t *heap = arg;
  if (heap == NULL || hsm_tls_heap != heap) return;
  int err = errno;
  if (heap->chain) hsm_chain_thread_exit(heap); /* the next thread starts on its heap */
  heap_leave(heap);
  hsm_tls_heap = &hsm_heap_empty;
  tls_exiting = 1;
  pthread_mutex_lock(&heaps_lock);
  abandon_locked(heap);
  pthread_mutex_unlock(&heaps_lock);
  errno = err;
}

/* An exited thread's heap has no owner to run its maintenance: whichever live thread
 * next needs a new segment or passes its own maintenance gives back the memory freed
 * into it (the blocks other threads freed to it, its pages that emptied), and its free
 * slices once the decay delay (or, with `force`, hsmalloc_collect) says so; without
 * that they would stay resident, whatever the pressure, until a new thread adopts the
 * heap. The heap itself waits for the next new thread. */
void hsm_collect_abandoned(int force) {
  if (atomic_load_explicit(&abandoned_count, memory_order_relaxed) == 0) return;
  if (force) pthread_mutex_lock(&heaps_lock);
  else if (pthread_mutex_trylock(&heaps_lock) != 0) return;
  uint64_t now = hsm_now_ms();
  for (hsm_heap_t *h = heaps_abandoned; h != NULL; h = h->abandoned_next) {
    if (atomic_load_explicit(&h->remote, memory_order_relaxed) != NULL) heap_tidy(h);
    hsm_segment_decay_slices(h, now, force);
  }
  pthread_mutex_unlock(&heaps_lock);
}

void hsm_heap_maintenance(hsm_heap_t *heap) {
  heap->slow_until_decay = HSM_DECAY_EVERY_SLOW;
  hsm_rbatch_flush_all(heap);
  uint64_t now = hsm_now_ms();
  hsm_hot_maintenance(heap, now);
  if (hsm_options.decay_ms >= 0) {
    if (hsm_purge_at_once()) hsm_purge_reserves(heap);
    hsm_segment_decay(heap, now);
    hsm_segment_cache_decay(now, 0);
    hsm_huge_cache_decay(now, 0);
  }
  hsm_collect_abandoned(0);
}

/* ---- fork ---- */

static void fork_prepare(void) {
  pthread_mutex_lock(&heaps_lock);
  hsm_segment_cache_lock();
  hsm_huge_cache_lock();
  hsm_hot_lock();
  hsm_transfer_lock_all();
}

static void fork_parent(void) {
  hsm_transfer_unlock_all();
  hsm_hot_unlock();
  hsm_huge_cache_unlock();
  hsm_segment_cache_unlock();
  pthread_mutex_unlock(&heaps_lock);
}

/* In the child only the forking thread exists: every other owned heap is abandoned,
 * so the next thread the child creates adopts it. */
static void fork_child(void) {
  hsm_transfer_unlock_all();
  hsm_hot_unlock();
  hsm_huge_cache_unlock();
  hsm_segment_cache_unlock();
  for (hsm_heap_t *h = heaps_all; h != NULL; h = h->all_next) {
    if (h->state == HSM_HEAP_OWNED && h != hsm_tls_heap) abandon_locked(h);
  }
  pthread_mutex_unlock(&heaps_lock);
}

__attribute__((constructor)) static void hsm_constructor(void) {
  if (!atomic_load(&init_done)) hsm_init();
  hsm_options_read(); /* the environment may not have been set up earlier */
  hsm_atfork(fork_prepare, fork_parent, fork_child);
  hsm_heap_t *heap = hsm_heap_get();
  if (heap != NULL) hsm_hot_apply_seeds(heap); /* sizes the first read could not see */
}

/* DT_FINI (src/allocator/CMakeLists.txt): nothing to do, the destructors do it. */
HSM_HIDDEN void hsm_fini(void);
void hsm_fini(void) {}

__attribute__((destructor(101))) static void hsm_destructor(void) {
  if (hsm_options.stats) hsm_stats_at_exit();
}
