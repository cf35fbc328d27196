/* Call-site lanes: operator new keeps objects made at different places apart.
 *
 * An application's own pool keeps each type in chunks of its own; a size class mixes
 * every type of its size in allocation order (a mesh's vertices and its hash map's
 * nodes, 24 bytes each, alternate in one page). operator new knows where it was called
 * from, and in C++ a call site is (nearly always) one type, so: each heap remembers the
 * call sites it has seen (a direct-mapped table of HSM_SITE_SLOTS by the return address
 * modulo 256: the same slots in every run, as ASLR moves code by whole pages; two sites
 * a multiple of 256 bytes apart take turns in a slot, and get lanes anew) and gives each new site of a class the next of HSM_SITE_LANES lanes
 * in turn; lane 0 is the ordinary classes (and malloc's path), lane l > 0 has its own
 * copy of the fixed classes up to HSM_SITE_MAX bytes, with pages of its own. The first
 * sites of a class thus get different pages; a fifth shares lane 0 again.
 *
 * A lane class is an ordinary class in every other respect: free, the per-thread cache
 * of other heaps' blocks, realloc and malloc_usable_size find it through the page.
 * Lanes are off in secure mode (every allocation is checked there), while a default
 * chain serves this thread, with HSMALLOC_SITE_LANES=0, and for malloc (a C call site
 * is often a wrapper shared by every type). Hot-size sampling does not see the
 * allocations of lanes 1 and up.
 *
 * The slot also keeps whether the site's new may be packed (8-byte aligned classes 24,
 * 40 .. 120): decided once, when the site is learned, by the compiler that built the
 * site's module (module.c: GCC only) or HSMALLOC_PACKED (0: never, all: always); the
 * class of a size comes from row 0 (packed) or row HSM_SITE_ROW (16) of
 * hsm_site_class. With lanes off, new keeps 16 unless HSMALLOC_PACKED=all.
 *
 * new's fast path (cxx.c) reads no table but the slot: site_sc keeps the size the site
 * last asked for and its class (hsm_site_resize, when the size changes), or for lane 0
 * HSM_SITE_MALLOC (malloc's fast path on the packed classes) or HSM_SITE_PLAIN
 * (hsm_new_malloc, called from new's fast path: a lane-0 site of many sizes, as
 * larson's one `new char[size]`, must not pay new_miss's look-ups on every new).
 */
#include "internal.h"

uint8_t hsm_site_class[2 * HSM_SITE_ROW];

void hsm_site_init(void) {
  for (size_t i = 0; i < HSM_SITE_ROW; i++) {
    hsm_site_class[i] = hsm_class_table[i];
    hsm_site_class[HSM_SITE_ROW + i] = hsm_class_table[(i + 1) & ~(size_t)1]; /* 16k+1..16k+8 up */
  }
}

static int new_packed(hsm_heap_t *heap, uintptr_t pc) {
  if (hsm_packed_new) return 1;
  if (!hsm_packed) return 0;
  /* the module of the last site learned, inline: two sites sharing a slot relearn at
   * every turn */
  const hsm_module_memo_t *m = &heap->site_module;
  if (m->gen == atomic_load_explicit(&hsm_module_unloads, memory_order_acquire) &&
      pc - m->lo < m->hi - m->lo)
    return m->packed;
  return hsm_module_new_packed(pc, &heap->site_module);
}

unsigned hsm_site_learn(hsm_heap_t *heap, unsigned slot, uintptr_t pc, size_t size) {
  heap->site_row[slot] = (uint8_t)(new_packed(heap, pc) ? 0 : HSM_SITE_ROW);
  size_t cls = hsm_class_table[(size + 7) >> 3]; /* a fixed class up to HSM_SITE_MAX */
  unsigned lane = heap->site_next[cls];
  heap->site_next[cls] = (uint8_t)((lane + 1) % HSM_SITE_LANES);
  heap->site_pc[slot] = pc;
  heap->site_base[slot] =
      (uint8_t)(lane == 0 ? 0 : HSM_LANE_BASE + (lane - 1) * HSM_SITE_LANE_CLASSES);
  /* lane 0 takes malloc's classes by size (hot sizes included): its fast path where the
   * site's new may be packed, else hsm_new_malloc */
  if (lane != 0) hsm_site_resize(heap, slot, size);
  else heap->site_sc[slot][0] = hsm_site_lane0(heap, slot);
  return heap->site_base[slot];
}

/* What the slot of a site of lane 0 keeps: malloc's fast path where the site's new may
 * be packed, else hsm_new_malloc's (new_site calls it without going through new_miss). */
uint8_t hsm_site_lane0(const hsm_heap_t *heap, unsigned slot) {
  return heap->site_row[slot] == 0 ? HSM_SITE_MALLOC : HSM_SITE_PLAIN;
}

/* row HSM_SITE_ROW: a packed size takes the 16-aligned class above it */
void hsm_site_resize(hsm_heap_t *heap, unsigned slot, size_t size) {
  heap->site_sc[slot][1] =
      (uint8_t)(heap->site_base[slot] + hsm_site_class[heap->site_row[slot] + ((size + 7) >> 3)]);
  heap->site_sc[slot][0] = (uint8_t)size;
}

/* Other threads' tables too: a slot of unloaded code is used by no thread any more
 * (its owner may overwrite it meanwhile: then it learns that site once more). */
void hsm_sites_forget(uintptr_t lo, uintptr_t hi) {
  hsm_heaps_lock();
  for (hsm_heap_t *h = hsm_heaps_first(); h != NULL; h = h->all_next)
    for (unsigned slot = 0; slot < HSM_SITE_SLOTS; slot++)
      if (h->site_pc[slot] - lo < hi - lo) __atomic_store_n(&h->site_pc[slot], 0, __ATOMIC_RELAXED);
  hsm_heaps_unlock();
}

/* Lanes off (a default chain serves new): no slot may hit new's fast path, so every
 * size is forgotten; the sites keep their lanes, and take them up again with their next
 * new once lanes are back (new_miss in cxx.c). */
void hsm_site_lanes_update(hsm_heap_t *heap) {
  heap->site_lanes = (uint8_t)(hsm_options.site_lanes && !hsm_secure && heap->chain == NULL);
  if (!heap->site_lanes)
    for (unsigned slot = 0; slot < HSM_SITE_SLOTS; slot++) heap->site_sc[slot][0] = HSM_SITE_NONE;
}
