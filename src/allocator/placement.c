/* Where a page's slices go in a segment: among the free slices, the placement that
 * faults in the least fresh memory and sits on the most resident pages (segment.c
 * asks, for a heap's segments and the cached ones), and what a freed page leaves
 * resident there. */
#include "internal.h"

int hsm_place_better(const hsm_run_cost_t *a, const hsm_run_cost_t *b) {
  if (a->fresh != b->fresh) return a->fresh < b->fresh;
  if (a->res != b->res) return a->res > b->res;
  return a->len < b->len;
}

/* Where to put n slices in `mask` (free slices): the placement that touches the
 * fewest fresh slices, then the one on the most resident 4 KiB pages (a page carves
 * from its start: on a slice its last page carved to the end it faults nothing in,
 * on one carved 4 KiB it faults in the rest while the other stays resident, idle),
 * then the smallest run (best fit keeps long runs whole for large blocks). Every start
 * in a run is tried (a freed block's touched slices are often at one end of a run
 * that goes on into untouched ones); `resident` NULL: a cached segment's header, not
 * read (it may be purged), its start and end only. Returns the first slice or -1, and
 * the placement's cost in *c. */
int hsm_place_run(uint32_t mask, uint32_t touched, const uint8_t *resident, unsigned n,
                  hsm_run_cost_t *c) {
  int best = -1;
  hsm_run_cost_t b = {33, 0, 33};
  uint32_t want = n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1;
  while (mask) {
    unsigned first = (unsigned)__builtin_ctz(mask);
    uint32_t rest = ~(mask >> first);
    unsigned run = rest ? (unsigned)__builtin_ctz(rest) : 32 - first;
    if (run >= n) {
      unsigned res = 0;
      if (resident != NULL)
        for (unsigned i = first; i < first + n; i++) res += touched >> i & 1u ? resident[i] : 0;
      for (unsigned at = first; at + n <= first + run; at++) {
        if (at > first) {
          unsigned out = at - 1, in = at + n - 1;
          if (resident != NULL) {
            res -= touched >> out & 1u ? resident[out] : 0;
            res += touched >> in & 1u ? resident[in] : 0;
          } else if (at != first + run - n) {
            continue; /* its start and its end only */
          }
        }
        hsm_run_cost_t t = {(unsigned)hsm_popcount((want << at) & ~touched), res, run};
        if (hsm_place_better(&t, &b)) {
          best = (int)at;
          b = t;
        }
      }
      if (b.fresh == 0 && b.len == n && (resident == NULL || b.res == n * HSM_SLICE_PAGES)) break;
    }
    mask &= first + run >= 32 ? 0 : ~0u << (first + run);
  }
  *c = b;
  return best;
}

/* A freed page's slices: how far it carved, in 4 KiB pages from each slice's start (a
 * large page's block counts whole), kept as the most any page carved there since the
 * slice was last purged (touch_slices resets a fresh one). */
void hsm_place_note_resident(hsm_segment_t *seg, const hsm_page_t *pg, size_t first) {
  size_t carved = pg->flags.f.is_large ? (size_t)pg->slice_count * HSM_SLICE_SIZE
                                       : (size_t)hsm_page_capacity(pg) * pg->block_size;
  for (size_t i = 0; i < pg->slice_count && carved > 0; i++) {
    size_t here = carved < HSM_SLICE_SIZE ? carved : HSM_SLICE_SIZE;
    uint8_t pages = (uint8_t)((here + 4095) / 4096);
    if (seg->resident[first + i] < pages) seg->resident[first + i] = pages;
    carved -= here;
  }
}
