/* Chains in the allocator spy and on a chosen NUMA node (test_chain_spy.py).
 *
 * "spy": chain "mesh" (OS memory, one owner): N mallocs of 96 bytes, F freed, R
 * of the live ones moved by realloc to 192 bytes, T freed by another thread (a
 * remote free, taken back by the owner's next slow path: one big block of BIG
 * bytes). Chain 2 (a caller's 1 MiB buffer, shared, unnamed): C callocs of 64
 * bytes. Chain 3 is created and destroyed: it is in no dump. The program prints
 * each live chain's figures as hsmalloc_chain_stats gives them, raises SIGUSR2
 * (a dump), and exits (a dump). "chain NAME key value ..." per chain
 *
 * "numa": an OS chain and a buffer chain bound to node 0, where
 * hsmalloc_numa_info reports their blocks (recorded node, the kernel's policy
 * and node, the resident node); then the bad nodes (EINVAL) and the binding
 * undone. "key value ..." */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "hsmalloc.h"

enum { N = 1000, F = 400, R = 10, T = 50, BIG = 100000, C = 100 };

static hsmalloc_chain_t *mesh;
static char *blocks[N];

static void *remote_free(void *arg) {
  (void)arg;
  for (int i = F + R; i < F + R + T; i++)
    free(blocks[i]); /* plain free(), another thread */
  return NULL;
}

static void print_chain(const char *label, hsmalloc_chain_t *c) {
  hsmalloc_stats_t st;
  CHECK(hsmalloc_chain_stats(c, &st) == 0, "stats");
  printf(
      "chain %s allocs %llu frees %llu reallocs %llu requested %llu allocated "
      "%llu live %llu "
      "real %llu virtual %llu overhead %llu metadata %llu free_in_pages %llu "
      "free_not_returned %llu page_bytes %llu rfq_blocks %llu rfq_bytes %llu "
      "slow %llu\n",
      label, (unsigned long long)st.allocs, (unsigned long long)st.frees,
      (unsigned long long)st.reallocs, (unsigned long long)st.requested_total,
      (unsigned long long)st.allocated_total,
      (unsigned long long)st.allocated_now, (unsigned long long)st.real_bytes,
      (unsigned long long)st.virtual_bytes,
      (unsigned long long)st.overhead_bytes,
      (unsigned long long)st.metadata_bytes,
      (unsigned long long)st.free_in_pages,
      (unsigned long long)st.free_not_returned,
      (unsigned long long)st.page_bytes, (unsigned long long)st.rfq_blocks,
      (unsigned long long)st.rfq_bytes, (unsigned long long)st.slow_allocs);
}

static int spy(void) {
  mesh = hsmalloc_chain_create(NULL, 0, 0);
  CHECK(mesh != NULL, "create: %s", strerror(errno));
  CHECK(hsmalloc_chain_set_name(mesh, "mesh") == 0, "name");
  for (int i = 0; i < N; i++) {
    blocks[i] = hsmalloc_chain_malloc(mesh, 96);
    CHECK(blocks[i] != NULL, "malloc %d", i);
    memset(blocks[i], i & 0xFF, 96);
  }
  for (int i = 0; i < F; i++)
    hsmalloc_chain_free(mesh, blocks[i]);
  for (int i = F; i < F + R; i++) {
    blocks[i] = hsmalloc_chain_realloc(mesh, blocks[i], 192);
    CHECK(blocks[i] != NULL && (unsigned char)blocks[i][95] == (i & 0xFF),
          "realloc %d", i);
  }
  pthread_t th;
  CHECK(pthread_create(&th, NULL, remote_free, NULL) == 0, "thread");
  pthread_join(th, NULL);
  char *big = hsmalloc_chain_malloc(
      mesh, BIG); /* the slow path takes the remote frees back */
  CHECK(big != NULL, "big");
  memset(big, 1, BIG);

  static char buffer[1 << 20] __attribute__((aligned(4096)));
  hsmalloc_chain_t *shared =
      hsmalloc_chain_create(buffer, sizeof buffer, HSMALLOC_CHAIN_SHARED);
  CHECK(shared != NULL, "buffer chain: %s", strerror(errno));
  for (int i = 0; i < C; i++) {
    char *p = hsmalloc_chain_calloc(shared, 1, 64);
    CHECK(p != NULL && p[63] == 0, "calloc %d", i);
  }
  hsmalloc_chain_t *gone = hsmalloc_chain_create(NULL, 0, 0);
  CHECK(gone != NULL && hsmalloc_chain_malloc(gone, 10) != NULL, "gone");
  hsmalloc_chain_destroy(gone);

  print_chain("mesh", mesh);
  print_chain("2", shared);
  fflush(stdout);
  raise(SIGUSR2);
  for (int i = F + R + T; i < N; i++) /* the blocks kept their contents */
    CHECK((unsigned char)blocks[i][0] == (i & 0xFF), "block %d", i);
  hsmalloc_chain_reset(
      shared); /* the exit dump shows chain 2 emptied, its memory kept */
  return 0;
}

static void print_info(const char *label, const void *p) {
  hsmalloc_numa_info_t in;
  CHECK(hsmalloc_numa_info(p, &in) == 0, "info");
  printf("%s_recorded %d %s_policy %d %s_policy_node %d %s_resident %d ", label,
         in.segment_node, label, in.policy, label, in.policy_node, label,
         in.resident_node);
}

static int numa(void) {
  hsmalloc_chain_t *os = hsmalloc_chain_create(NULL, 0, 0);
  CHECK(os != NULL, "create");
  CHECK(hsmalloc_chain_bind_node(os, 0) == 0, "bind 0: %s", strerror(errno));
  char *small = hsmalloc_chain_malloc(os, 512 * 1024); /* in the first region */
  memset(small, 3, 512 * 1024);
  char *big = hsmalloc_chain_malloc(
      os, 4 << 20); /* a region of its own, mapped after binding */
  memset(big, 4, 4 << 20);
  size_t size = 4 << 20;
  char *buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(buf != MAP_FAILED, "mmap");
  memset(buf, 0, size); /* touched before binding: moved by it */
  hsmalloc_chain_t *inbuf = hsmalloc_chain_create(buf + 16, size - 16, 0);
  CHECK(inbuf != NULL, "buffer chain");
  CHECK(hsmalloc_chain_bind_node(inbuf, 0) == 0, "bind buffer: %s",
        strerror(errno));
  char *b = hsmalloc_chain_malloc(inbuf, 1000);
  memset(b, 5, 1000);
  print_info("os", small);
  print_info("dedicated", big);
  print_info("buffer", b);
  hsmalloc_stats_t st;
  hsmalloc_chain_stats(os, &st);
  printf("os_node %d os_binds %llu os_failures %llu ", st.numa_node,
         (unsigned long long)st.numa_binds,
         (unsigned long long)st.numa_bind_failures);
  hsmalloc_chain_stats(inbuf, &st);
  printf("buffer_node %d buffer_binds %llu ", st.numa_node,
         (unsigned long long)st.numa_binds);
  /* bad nodes: EINVAL, the binding unchanged */
  int nodes = st.numa_nodes;
  errno = 0;
  int rc_past = hsmalloc_chain_bind_node(os, nodes);
  int err_past = errno;
  errno = 0;
  int rc_neg = hsmalloc_chain_bind_node(os, -2);
  int err_neg = errno;
  errno = 0;
  int rc_null = hsmalloc_chain_bind_node(NULL, 0);
  int err_null = errno;
  hsmalloc_chain_stats(os, &st);
  printf("nodes %d bad_past %d bad_past_einval %d bad_negative %d "
         "bad_negative_einval %d "
         "bad_null %d bad_null_einval %d after_bad_node %d ",
         nodes, rc_past, err_past == EINVAL, rc_neg, err_neg == EINVAL, rc_null,
         err_null == EINVAL, st.numa_node);
  CHECK(hsmalloc_chain_bind_node(os, -1) == 0, "unbind");
  hsmalloc_chain_stats(os, &st);
  printf("unbound_node %d ", st.numa_node);
  print_info("unbound", small);
  unsigned long long sum = 0;
  for (size_t i = 0; i < (size_t)(4 << 20); i += 4096)
    sum += (unsigned char)big[i];
  printf("sum %llu\n",
         sum + (unsigned char)small[1000] + (unsigned char)b[999]);
  fflush(stdout);
  /* left alive: the exit dump shows both bound chains */
  return 0;
}

/* "busy": dumps from the main thread while the owner of a chain maps and unmaps
 * a region for each 3 MiB block: a dump must not read a region being unmapped.
 *   "busy allocs A frees F dumps D" */
enum { BUSY_ROUNDS = 3000 };
static _Atomic int busy_done;

static void *busy_owner(void *arg) {
  (void)arg;
  hsmalloc_chain_t *c = hsmalloc_chain_create(NULL, 0, 0);
  CHECK(c != NULL, "create");
  for (int i = 0; i < BUSY_ROUNDS; i++) {
    char *p = hsmalloc_chain_malloc(c, 3 << 20);
    CHECK(p != NULL, "big %d", i);
    p[i] = 1;
    hsmalloc_chain_free(c, p);
  }
  hsmalloc_stats_t st;
  hsmalloc_chain_stats(c, &st);
  printf("busy allocs %llu frees %llu ", (unsigned long long)st.allocs,
         (unsigned long long)st.frees);
  busy_done = 1;
  return c; /* alive: in the exit dump */
}

static int busy(void) {
  FILE *sink = fopen("/dev/null", "w");
  CHECK(sink != NULL, "/dev/null");
  pthread_t th;
  CHECK(pthread_create(&th, NULL, busy_owner, NULL) == 0, "thread");
  long dumps = 0;
  for (; !busy_done; dumps++)
    hsmalloc_stats_print_json(sink);
  pthread_join(th, NULL);
  printf("dumps %ld\n", dumps);
  fclose(sink);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "busy") == 0)
    return busy();
  if (argc > 1 && strcmp(argv[1], "numa") == 0)
    return numa();
  return spy();
}
