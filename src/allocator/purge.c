/* Free blocks of the big classes: a reserve per class resident, the rest given back.
 *
 * A page of a class whose blocks span whole OS pages (HSM_PURGE_BLOCK_MIN and up) holds
 * its free blocks as long as any block of it is out, and under random churn a page of a
 * few big blocks almost never empties: each class keeps the pages of its own peak, and
 * with every byte of the blocks written (a solver's arrays) the free ones stay resident.
 * So a heap keeps at most a reserve of them resident per class (HSMALLOC_FREE_RESERVE
 * bytes of blocks, at least HSM_PURGE_RESERVE_MIN blocks) on its pages' lists; a block
 * coming home beyond the reserve has its whole 4 KiB pages given back (MADV_DONTNEED; its
 * first 16 bytes, link and free mark, stay) and waits on its page's `purged` list.
 * heap->resident_free[cls] counts the resident ones on the queue's pages: `local_free`,
 * and `free` unless the page marked it cold (purged or freshly carved blocks). The class's
 * refill takes resident blocks while there are any (page.c, page_with_free: a page with
 * none is passed over), so that refaults are paid only when the class's live count climbs
 * past its reserve, and memory given back only when it falls past it: the thread cache
 * and the reserve absorb the steady churn, the class's swings pay. A fixed class that
 * allocated nothing through the sweeps of the caches it must wait (cache.c: 1 at first,
 * more each time it allocates again soon after giving back) gives its reserve back (its pages
 * may hold a program's first blocks of a size a hot class took over), and so do a
 * collect, an abandoned heap and high memory pressure (the heap's maintenance). */
#include "internal.h"

uint32_t hsm_class_reserve[HSM_CLASSES];

/* A hot class above 4 KiB purges too, whatever its block size: its blocks span two OS
 * pages or more, and the refill's preference for resident blocks is what keeps its
 * resident blocks at its live peak. Without it, a class that does not purge carves
 * fresh blocks from its current page while blocks freed on its other pages wait (a page
 * parked full goes to the back of the queue when a block comes back), so under random
 * churn its pages end carved whole: ghost-cells' 4,112-byte arrays, 3,346 blocks carved
 * and written for a live peak of 3,145 (0.8 MiB). */
int hsm_purge_class(size_t cls) {
  size_t bsize = hsm_class_size[cls];
  return (bsize >= HSM_PURGE_BLOCK_MIN || (hsm_is_hot(cls) && bsize > HSM_CLASS_TABLE_MAX)) &&
         !hsm_secure && hsm_options.decay_ms >= 0 && hsm_options.free_reserve >= 0;
}

/* The resident free blocks a heap keeps of purging class cls (none with
 * HSMALLOC_DECAY_MS=0; under high memory pressure the heap's maintenance empties the
 * reserves: hsm_purge_reserves). */
uint32_t hsm_purge_reserve_of(size_t cls) {
  size_t bsize = hsm_class_size[cls];
  if (!hsm_purge_class(cls) || hsm_options.decay_ms == 0) return 0;
  size_t blocks = (size_t)hsm_options.free_reserve / bsize;
  if (blocks < HSM_PURGE_RESERVE_MIN) blocks = HSM_PURGE_RESERVE_MIN;
  return blocks > UINT32_MAX ? UINT32_MAX : (uint32_t)blocks;
}

/* The whole OS pages of block b (of bsize bytes) after its first 16 bytes go back. */
static void purge_block(hsm_block_t *b, size_t bsize) {
  uintptr_t lo = ((uintptr_t)b + sizeof *b + 4095) & ~(uintptr_t)4095;
  uintptr_t hi = ((uintptr_t)b + bsize) & ~(uintptr_t)4095;
  if (hi > lo) hsm_os_purge((void *)lo, hi - lo);
}

/* Block b of pg purged onto pg's `purged`. */
static void to_purged(hsm_page_t *pg, hsm_block_t *b) {
  purge_block(b, pg->block_size);
  b->next = pg->purged;
  pg->purged = b;
}

/* Every block of list b (pg's) purged onto pg's `purged`. */
static void purge_list(hsm_page_t *pg, hsm_block_t *b) {
  while (b != NULL) {
    hsm_block_t *next = b->next;
    to_purged(pg, b);
    b = next;
  }
}

void hsm_purge_home(hsm_heap_t *heap, hsm_page_t *pg, hsm_block_t *head, hsm_block_t *tail,
                    uint32_t n) {
  uint32_t *resident = &heap->resident_free[pg->class_id];
  uint32_t reserve = hsm_purge_at_once() ? 0 : hsm_class_reserve[pg->class_id];
  uint32_t keep = *resident >= reserve ? 0 : reserve - *resident;
  if (keep >= n) { /* the whole run stays resident */
    tail->next = pg->local_free;
    pg->local_free = head;
    *resident += n;
    return;
  }
  *resident += keep;
  hsm_block_t *b = head; /* the newest first: the ones the reserve keeps */
  for (uint32_t i = 0; i < n; i++) {
    hsm_block_t *next = b->next; /* (tail's link is not the run's: n counts it) */
    if (i < keep) {
      b->next = pg->local_free;
      pg->local_free = b;
    } else {
      to_purged(pg, b);
    }
    b = next;
  }
}

static uint32_t list_length(const hsm_block_t *b) {
  uint32_t n = 0;
  for (; b != NULL; b = b->next) n++;
  return n;
}

/* The resident free blocks of pg, a purging page leaving the queue (to its segment, or
 * kept by postponed free) or coming back: out of the class's count, or into it. */
static uint32_t resident_of(const hsm_page_t *pg) {
  return list_length(pg->local_free) + (pg->free_cold ? 0 : list_length(pg->free));
}
void hsm_purge_leave(hsm_heap_t *heap, hsm_page_t *pg) {
  uint32_t n = resident_of(pg), *resident = &heap->resident_free[pg->class_id];
  *resident = *resident > n ? *resident - n : 0;
}
void hsm_purge_enter(hsm_heap_t *heap, hsm_page_t *pg) {
  heap->resident_free[pg->class_id] += resident_of(pg);
}

/* pg, first on its class's queue, when resident free blocks of the class wait on other
 * pages: 1 if it has none itself (its cold `free` list, if any, joins `purged`), so that
 * the caller passes it over; 0: take from it. */
int hsm_purge_pass_over(hsm_heap_t *heap, hsm_page_t *pg) {
  if (heap->resident_free[pg->class_id] == 0) return 0;
  if (pg->free != NULL && pg->free_cold) {
    hsm_block_t *t = pg->free;
    while (t->next != NULL) t = t->next;
    t->next = pg->purged;
    pg->purged = pg->free;
    pg->free = NULL;
  }
  return pg->free == NULL && pg->local_free == NULL &&
         (pg->purged != NULL || pg->limit < pg->reserved * hsm_block_step(pg));
}

/* Class cls allocated nothing through the sweeps it waits (cache.c): it needs no
 * reserve, and its resident free blocks go back too (a fixed class a hot class has taken
 * over keeps its pages until their last old blocks are freed: ghost-cells' first 1024
 * arrays). */
void hsm_purge_idle_class(hsm_heap_t *heap, size_t cls) {
  for (hsm_page_t *pg = heap->queue[cls].first; pg != NULL; pg = pg->next) {
    if (!pg->purging) continue;
    if (pg->free != NULL && !pg->free_cold) {
      purge_list(pg, pg->free);
      pg->free = NULL;
    }
    purge_list(pg, pg->local_free);
    pg->local_free = NULL;
  }
  heap->resident_free[cls] = 0;
}

/* The OS pages of pg's carved blocks given back (its slices stay counted as touched:
 * the placement sees them as before). */
static void purge_carved(const hsm_page_t *pg) {
  size_t carved = (size_t)hsm_page_capacity(pg) * pg->block_size;
  hsm_os_purge(pg->start, (carved + 4095) & ~(size_t)4095);
}

/* Page pg, empty, goes back to its segment: the one rule for what goes back to the OS
 * with it. 1: its slices (hsm_segment_page_free gives back their touched runs, one
 * madvise each); 0: nothing more, or its carved part, given back here. What is not
 * given back stays resident for the next page or large block to reuse (idle_pages.c).
 * Memory goes back only when the class is a fixed one no block of the program's will
 * be carved from soon:
 * - one a hot class installed here took over (hot.c, hsm_hot_superseded: ghost-cells'
 *   first 1,024 arrays, in the classes of 4,608, 18,432 and 73,728 bytes while the
 *   window sampled, whose free slices otherwise stayed resident until the segments'
 *   decay, 8 s with room to spare): its carved part;
 * - one above 8 KiB that allocated nothing since the last sweep of the caches (cache.c:
 *   16-31 slow paths), in a heap that never made a large block: its slices. Such a class
 *   carves a block at a time, so a slice it carved far and then left stayed resident
 *   under whichever page landed there next, which carved a few KiB of it: espresso's big
 *   classes took turns on the same slices, and at its peak their pages held 555 KiB
 *   resident past their carved blocks and the free slices 264 KiB more (1.9 MiB of
 *   segments for 390 KiB live). A heap that makes large blocks keeps the slices for them,
 *   which take a freed page's slices whole (realloc-large: 28,000 faults with them kept,
 *   76,000 purged), and gives back only the carved part of a page holding purged blocks
 *   (their first and last OS pages).
 * A class taken up since the sweep keeps its slices: its page was emptied by a cache's
 * flush or remote frees while it is in use, and its next page lands on the same slices
 * (segment.c, find_class_run), where a give-back only made the kernel fault them in
 * again (rptest's classes of 9-16 KiB); so does an idle class that keeps being made
 * again at once (hsm_purge_page_made). So do the classes up to 8 KiB, whose freed pages
 * the pressure design keeps for reuse while there is room. A secure page's carved part
 * stays. */
int hsm_purge_page_gone(hsm_heap_t *heap, const hsm_page_t *pg) {
  size_t cls = pg->class_id;
  if (pg->flags.f.is_large || cls >= HSM_FIXED_CLASSES || hsm_options.decay_ms < 0 ||
      hsm_options.hugepages)
    return 0;
  int idle = cls >= HSM_IDLE_CLASS_FIRST &&
             HSM_READ(heap->stats.allocs[cls]) == heap->idle_allocs[cls - HSM_IDLE_CLASS_FIRST];
  if (idle && HSM_READ(heap->stats.allocs[HSM_BIN_LARGE]) == 0) {
    size_t i = cls - HSM_IDLE_CLASS_FIRST;
    heap->gone_ms[i] = (uint32_t)hsm_now_ms() | 1u;
    return !(heap->gone_keep & 1u << i);
  }
  if (!pg->flags.f.secure &&
      ((idle && pg->purged != NULL) || (heap->hot_count != 0 && hsm_hot_superseded(heap, cls))))
    purge_carved(pg);
  return 0;
}

/* Class cls (above 8 KiB) makes a page. Made again within HSM_GIVEBACK_SOON_MS of its
 * last page's going back idle twice in a row, the class keeps its next such page's
 * slices (hsm_purge_page_gone), until a page of it is made again HSM_GIVEBACK_LATE_MS
 * or more after: rptest's classes of 9-16 KiB, idle for a sweep, were made again at
 * once on their own slices, where the give-back only made the kernel fault them in
 * again (189 of 208 give-backs a run). A remaking in between leaves the pattern as it
 * was: xmalloc-test's producers (four threads on two cores) make a page of batches every
 * millisecond or two, and each time one was preempted the next two pages went back and
 * were faulted in again (1,248 give-backs, 51,000 faults in a 3 s secure run, 3,015 in
 * the default mode). espresso's big classes, which take turns over tens to hundreds of
 * ms, are made again that soon now and then (28 of 693), never twice in a row: after
 * one such, keeping the next page's slices cost 36 KiB of its max RSS. */
__attribute__((cold)) void hsm_purge_page_made(hsm_heap_t *heap, size_t cls) {
  size_t i = cls - HSM_IDLE_CLASS_FIRST;
  uint32_t bit = 1u << i;
  if (heap->gone_ms[i] == 0) return;
  uint32_t since = ((uint32_t)hsm_now_ms() | 1u) - heap->gone_ms[i];
  if (since >= HSM_GIVEBACK_LATE_MS) {
    heap->gone_soon &= ~bit;
    heap->gone_keep &= ~bit;
  } else if (since >= HSM_GIVEBACK_SOON_MS) {
    /* neither soon nor late: the class's pattern stands */
  } else if (heap->gone_soon & bit) {
    heap->gone_keep |= bit;
  } else {
    heap->gone_soon |= bit;
  }
  heap->gone_ms[i] = 0;
}

/* A page of class cls (above 8 KiB) placed on slices `old` of seg that an earlier page or
 * large block left resident (not its class's own last page: find_class_run), first
 * slice `first`: the slices past those its first block lies in go back now. Such a class
 * carves a block at a time, and the rest of the run sat resident under the page, in use
 * to the growth budget (hsm_offset_growth), for blocks it may never carve: GROMACS's
 * 22,528-byte class on a freed 256 KiB block's slices held 192 KiB resident for two
 * blocks. A block carved there later faults its pages in, as on fresh slices; the
 * slices stay touched and counted committed, as a page's extent is counted whole. Whole
 * slices: given back past the first block's 4 KiB pages, rptest's classes of 9-16 KiB,
 * placed on one another's slices by turns, faulted back a third more pages. */
__attribute__((cold)) void hsm_purge_page_placed(hsm_segment_t *seg, size_t first, size_t cls,
                                                 uint32_t old) {
  if (hsm_options.decay_ms <= 0 || hsm_options.hugepages || hsm_secure) return;
  size_t past = first + (hsm_class_size[cls] + HSM_SLICE_SIZE - 1) / HSM_SLICE_SIZE;
  for (size_t i = past; i < HSM_SLICES && (old >> i) != 0; i++) {
    if (!(old >> i & 1u) || seg->resident[i] == 0) continue; /* nothing resident */
    hsm_os_purge((uint8_t *)seg + i * HSM_SLICE_SIZE, HSM_SLICE_SIZE);
    seg->resident[i] = 0;
  }
}

/* Memory is to go back at once (the node runs short): every reserve of the heap too. */
void hsm_purge_reserves(hsm_heap_t *heap) {
  for (size_t cls = 0; cls < HSM_CLASSES; cls++)
    if (heap->resident_free[cls] != 0) hsm_purge_idle_class(heap, cls);
}
