/* pressure_numa.h — a part of internal.h, included there at its place (it uses the types
 * declared before it): what the allocator reads of memory pressure (pressure.c) and its NUMA placement (numa.c). */
#ifndef HSM_PRESSURE_NUMA_H
#define HSM_PRESSURE_NUMA_H

/* ---- memory pressure (pressure.c) ---- */
enum { HSM_PRESSURE_NONE, HSM_PRESSURE_SOME, HSM_PRESSURE_HIGH, HSM_PRESSURE_CRITICAL };
typedef struct {
  _Atomic int level;                /* HSM_PRESSURE_* */
  _Atomic int64_t headroom_pm;      /* available / limit, per mille (1000: no figure) */
  _Atomic int64_t psi_some;         /* /proc/pressure/memory some avg10, percent x 100 */
  _Atomic int64_t limit, available; /* bytes of the tightest limit (node or cgroup) */
  _Atomic uint64_t checks;          /* times the files were read */
  _Atomic uint64_t level_changes;
  _Atomic uint64_t pressure_purges; /* purges done at once because of pressure */
} hsm_pressure_state_t;
HSM_HIDDEN extern hsm_pressure_state_t hsm_pressure;
/* At the library's start (options read): the process's memory cgroup, looked up once. */
HSM_HIDDEN void hsm_pressure_init(void);
/* Read the sources if the last reading is older than the check interval; returns the
 * level. Costs one clock read and a compare when it is not time yet. */
HSM_HIDDEN int hsm_pressure_poll(void);
/* The decay delay to use now: HSMALLOC_DECAY_MS scaled by the level (-1: never). */
HSM_HIDDEN long hsm_decay_now(void);
/* Purge at once what is freed (pages, segments): pressure level high or more, or decay 0. */
static inline int hsm_purge_at_once(void) {
  return hsm_options.decay_ms == 0 ||
         (hsm_options.decay_ms > 0 && hsm_options.pressure &&
          atomic_load_explicit(&hsm_pressure.level, memory_order_relaxed) >= HSM_PRESSURE_HIGH);
}

/* ---- NUMA placement (numa.c) ---- */
HSM_HIDDEN int hsm_numa_nodes(void);        /* nodes of the machine (1 when unknown) */
HSM_HIDDEN int hsm_numa_enabled(void);      /* placement requested (HSMALLOC_NUMA, nodes) */
HSM_HIDDEN int hsm_numa_current_node(void); /* node of the CPU this thread runs on */
/* Ask the kernel to place [p, p+size) on `node` (mbind, MPOL_PREFERRED); 0 or -errno. */
HSM_HIDDEN int hsm_numa_bind(void *p, size_t size, int node);
/* The same, and with `move` the pages already resident elsewhere are moved (MPOL_MF_MOVE). */
HSM_HIDDEN int hsm_numa_bind_range(void *p, size_t size, int node, int move);
/* Place a segment on `node` (-1: leave it to the kernel) and record it in its header. Chains
 * call it to put their segments on a chosen node. Returns 0 or -errno. */
HSM_HIDDEN int hsm_segment_bind_node(hsm_segment_t *seg, int node);
/* Node the page holding p is on (move_pages query), -1 when not resident or unknown. */
HSM_HIDDEN int hsm_numa_node_of(const void *p);
typedef struct {
  _Atomic uint64_t binds, bind_failures;                /* mbind calls */
  _Atomic uint64_t reused_same_node, reused_other_node; /* cached segments taken */
} hsm_numa_stats_t;
HSM_HIDDEN extern hsm_numa_stats_t hsm_numa_stats;

#endif
