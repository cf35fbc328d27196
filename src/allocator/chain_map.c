/* Finding the chain of a pointer. A chain's OS regions are 2 MiB-aligned mappings
 * whose registry byte says HSM_REG_CHAIN_SEG: masking the pointer gives the region
 * header. A caller's buffer can start anywhere and share its first and last 2 MiB
 * units with other memory (a glibc chunk, an hsmalloc segment, another buffer), so
 * its units say HSM_REG_CHAIN_MAP and a two-level map (like the MPC allocator's
 * indirection map) lists the regions overlapping each unit, with the kind the unit
 * had before: a pointer of the unit outside every region is still handled as that
 * kind. Lookups take no lock: map tables and list links are never unmapped, and a
 * buffer's links change only at chain creation and destruction. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>

#include "chain.h"

typedef struct hsm_clink_s {
  hsm_cregion_t *region;
  struct hsm_clink_s *next;
} hsm_clink_t;

typedef struct {
  uint8_t prior;               /* registry kind of the unit before the first buffer */
  _Atomic(hsm_clink_t *) head; /* regions overlapping the unit */
} hsm_cunit_t;

#define L2_SIZE ((size_t)1 << HSM_CHAIN_MAP_L2_BITS)

HSM_BIG_BSS static _Atomic(hsm_cunit_t *) map_l1[(size_t)1 << HSM_CHAIN_MAP_L1_BITS];
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static hsm_clink_t *links_free; /* unused links (under map_lock) */

static hsm_cunit_t *unit_entry(uintptr_t unit) {
  hsm_cunit_t *l2 =
      atomic_load_explicit(&map_l1[unit >> HSM_CHAIN_MAP_L2_BITS], memory_order_acquire);
  return l2 ? &l2[unit & (L2_SIZE - 1)] : NULL;
}

static int in_region(const hsm_cregion_t *r, const void *p) {
  return (const uint8_t *)p >= r->base && (const uint8_t *)p < r->end;
}

hsm_cregion_t *hsm_chain_region_of(const void *p, unsigned kind, unsigned *prior) {
  *prior = HSM_REG_NONE;
  if (kind == HSM_REG_CHAIN_SEG) {
    hsm_cregion_t *r = (hsm_cregion_t *)((uintptr_t)p & ~(uintptr_t)HSM_SEGMENT_MASK);
    if (r->magic == HSM_CHAIN_REGION_MAGIC && in_region(r, p)) return r;
    return NULL;
  }
  hsm_cunit_t *u = unit_entry((uintptr_t)p >> HSM_SEGMENT_SHIFT);
  if (u == NULL) return NULL;
  for (hsm_clink_t *l = atomic_load_explicit(&u->head, memory_order_acquire); l; l = l->next)
    if (in_region(l->region, p)) return l->region;
  *prior = u->prior;
  return NULL;
}

static hsm_clink_t *link_new(void) {
  if (links_free == NULL) {
    size_t bytes = 64 * 1024;
    hsm_clink_t *chunk =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (chunk == MAP_FAILED) return NULL;
    for (size_t i = 0; i < bytes / sizeof *chunk; i++) {
      chunk[i].next = links_free;
      links_free = &chunk[i];
    }
  }
  hsm_clink_t *l = links_free;
  links_free = l->next;
  return l;
}

static int overlaps(const hsm_cregion_t *a, const hsm_cregion_t *b) {
  return a->lo < b->hi && b->lo < a->hi;
}

static void remove_locked(hsm_cregion_t *r, uintptr_t last) {
  for (uintptr_t unit = (uintptr_t)r->lo >> HSM_SEGMENT_SHIFT; unit <= last; unit++) {
    hsm_cunit_t *u = unit_entry(unit);
    if (u == NULL) continue;
    hsm_clink_t *prev = NULL, *l = atomic_load_explicit(&u->head, memory_order_relaxed);
    while (l != NULL && l->region != r) {
      prev = l;
      l = l->next;
    }
    if (l == NULL) continue;
    if (prev) prev->next = l->next;
    else atomic_store_explicit(&u->head, l->next, memory_order_release);
    l->next = links_free; /* may still be read by a racing lookup: it stays mapped */
    links_free = l;
    if (atomic_load_explicit(&u->head, memory_order_relaxed) == NULL)
      hsm_registry_set((void *)(unit << HSM_SEGMENT_SHIFT), u->prior);
  }
}

int hsm_chain_map_add(hsm_cregion_t *r) {
  uintptr_t first = (uintptr_t)r->lo >> HSM_SEGMENT_SHIFT;
  uintptr_t last = ((uintptr_t)r->hi - 1) >> HSM_SEGMENT_SHIFT;
  if (last >= HSM_REGISTRY_SIZE) return EINVAL;
  int err = 0;
  pthread_mutex_lock(&map_lock);
  for (uintptr_t unit = first; unit <= last && !err; unit++) { /* overlap check first */
    hsm_cunit_t *u = unit_entry(unit);
    for (hsm_clink_t *l = u ? atomic_load_explicit(&u->head, memory_order_relaxed) : NULL; l;
         l = l->next)
      if (overlaps(l->region, r)) err = EBUSY;
    if (hsm_registry_kind((void *)(unit << HSM_SEGMENT_SHIFT)) == HSM_REG_CHAIN_SEG) err = EBUSY;
  }
  uintptr_t unit = first;
  for (; unit <= last && !err; unit++) {
    size_t i1 = unit >> HSM_CHAIN_MAP_L2_BITS;
    if (atomic_load_explicit(&map_l1[i1], memory_order_relaxed) == NULL) {
      void *l2 = mmap(NULL, L2_SIZE * sizeof(hsm_cunit_t), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (l2 == MAP_FAILED) {
        err = ENOMEM;
        break;
      }
      atomic_store_explicit(&map_l1[i1], (hsm_cunit_t *)l2, memory_order_release);
    }
    hsm_cunit_t *u = unit_entry(unit);
    hsm_clink_t *l = link_new();
    if (l == NULL) {
      err = ENOMEM;
      break;
    }
    l->region = r;
    hsm_clink_t *head = atomic_load_explicit(&u->head, memory_order_relaxed);
    if (head == NULL) u->prior = (uint8_t)hsm_registry_kind((void *)(unit << HSM_SEGMENT_SHIFT));
    l->next = head;
    atomic_store_explicit(&u->head, l, memory_order_release);
    hsm_registry_set((void *)(unit << HSM_SEGMENT_SHIFT), HSM_REG_CHAIN_MAP);
  }
  if (err && unit > first) remove_locked(r, unit - 1);
  pthread_mutex_unlock(&map_lock);
  return err;
}

void hsm_chain_map_remove(hsm_cregion_t *r) {
  pthread_mutex_lock(&map_lock);
  remove_locked(r, ((uintptr_t)r->hi - 1) >> HSM_SEGMENT_SHIFT);
  pthread_mutex_unlock(&map_lock);
}
