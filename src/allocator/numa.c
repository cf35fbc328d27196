/* NUMA placement with the kernel's system calls (no libnuma: it allocates while it
 * initializes, and hsmalloc runs inside the first malloc).
 *
 * A segment taken from the OS is placed on the node of the thread that takes it
 * (mbind, MPOL_PREFERRED: the kernel falls back to another node when that one is
 * full instead of failing the page fault); its header records the node, the cache
 * of empty segments hands out the taker's node's segments first (segment.c), and a
 * segment of another node taken from the cache is placed anew (the policy applies to
 * pages faulted from then on: pages still resident are not moved).
 * HSMALLOC_NUMA: auto (default) places only on machines with several nodes, 1 always
 * (so one-node machines can test it), 0 never. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hsmalloc.h"
#include "internal.h"

#define MPOL_DEFAULT_   0
#define MPOL_PREFERRED_ 1
#define MPOL_F_NODE_    (1 << 0)
#define MPOL_F_ADDR_    (1 << 1)
#define MPOL_MF_MOVE_   (1 << 1)

hsm_numa_stats_t hsm_numa_stats;
static _Atomic int node_count; /* 0: not read yet */

/* Highest node in /sys/devices/system/node/possible ("0", "0-3", "0,2") + 1. */
static int read_node_count(void) {
  char buf[256];
  int fd = open("/sys/devices/system/node/possible", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 1;
  buf[n] = '\0';
  long highest = 0;
  for (char *p = buf; *p;) {
    const char *end;
    long v = (long)hsm_parse_dec(p, &end);
    if (end == p) {
      p++;
      continue;
    }
    if (v > highest) highest = v;
    p = (char *)end;
  }
  return highest + 1 > HSM_NUMA_MAX_NODES ? HSM_NUMA_MAX_NODES : (int)highest + 1;
}

int hsm_numa_nodes(void) {
  int n = atomic_load_explicit(&node_count, memory_order_relaxed);
  if (n == 0) {
    n = read_node_count();
    atomic_store_explicit(&node_count, n, memory_order_relaxed);
  }
  return n;
}

int hsm_numa_enabled(void) {
  if (hsm_options.numa >= 0) return hsm_options.numa;
  return hsm_numa_nodes() > 1;
}

int hsm_numa_current_node(void) {
  unsigned cpu = 0, node = 0;
  if (syscall(SYS_getcpu, &cpu, &node, NULL) != 0) return 0;
  return node < HSM_NUMA_MAX_NODES ? (int)node : 0;
}

int hsm_numa_bind(void *p, size_t size, int node) { return hsm_numa_bind_range(p, size, node, 0); }

int hsm_numa_bind_range(void *p, size_t size, int node, int move) {
  int err = errno;
  unsigned long mask = node >= 0 ? 1ul << node : 0;
  unsigned flags = move ? MPOL_MF_MOVE_ : 0;
  long rc = node >= 0 && node < HSM_NUMA_MAX_NODES
                ? syscall(SYS_mbind, p, size, MPOL_PREFERRED_, &mask, HSM_NUMA_MAX_NODES + 1, flags)
                : syscall(SYS_mbind, p, size, MPOL_DEFAULT_, NULL, 0, flags);
  int result = rc == 0 ? 0 : -errno;
  errno = err;
  atomic_fetch_add_explicit(rc == 0 ? &hsm_numa_stats.binds : &hsm_numa_stats.bind_failures, 1,
                            memory_order_relaxed);
  return result;
}

int hsm_segment_bind_node(hsm_segment_t *seg, int node) {
  int rc = hsm_numa_bind(seg, HSM_SEGMENT_SIZE, node);
  seg->numa_node = rc == 0 ? node : -1;
  seg->numa_bound = rc == 0 && node >= 0;
  return rc;
}

int hsm_numa_node_of(const void *p) {
  int err = errno;
  void *page = (void *)((uintptr_t)p & ~(uintptr_t)4095);
  int status = -1;
  long rc = syscall(SYS_move_pages, 0, 1ul, &page, NULL, &status, 0);
  errno = err;
  return rc == 0 && status >= 0 ? status : -1;
}

/* The placement of the memory holding p, as asked for and as done (tests, tools). */
HSM_EXPORT int hsmalloc_numa_info(const void *p, hsmalloc_numa_info_t *out) {
  if (out == NULL) return -1;
  out->nodes = hsm_numa_nodes();
  out->placing = hsm_numa_enabled();
  out->segment_node = -1;
  if (hsm_registry_kind(p) == HSM_REG_SEGMENT) out->segment_node = hsm_segment_of(p)->numa_node;
  else if (hsm_chain_node_of != NULL) out->segment_node = hsm_chain_node_of(p);
  int err = errno;
  int mode = -1;
  unsigned long mask = 0;
  out->policy =
      syscall(SYS_get_mempolicy, &mode, &mask, HSM_NUMA_MAX_NODES + 1, p, MPOL_F_ADDR_) == 0 ? mode
                                                                                             : -1;
  out->policy_node = -1;
  if (out->policy == MPOL_PREFERRED_ && mask != 0) out->policy_node = __builtin_ctzl(mask);
  errno = err;
  out->resident_node = hsm_numa_node_of(p);
  out->thread_node = hsm_numa_current_node();
  return 0;
}
