/* Chains in the statistics: the list of live chains, their numbers and names, and the
 * hook by which the JSON dumps (stats_json.c: at exit, on SIGUSR2, on call) list every
 * live chain with its figures.
 *
 * A dump reads a chain's counters without its lock and never walks its regions (the
 * memory figures are counters too, chain.c), so it may run in a signal handler and
 * while the owner allocates: an unshared chain's figures are then a moment's snapshot,
 * each figure exact for its own counter. Only the list is locked: creation and
 * destruction wait for a dump in progress, and a dump in a signal handler that finds
 * the list taken is written later (stats_json.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "chain.h"

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static hsmalloc_chain_t *live_head;
static uint32_t live_ids; /* numbers given so far (under live_lock) */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* A fork while another thread held the list: the child has no such thread. */
static void live_fork_child(void) { pthread_mutex_init(&live_lock, NULL); }
static void live_fork_install(void) { hsm_atfork(NULL, NULL, live_fork_child); }

void hsm_chain_live_add(hsmalloc_chain_t *c) {
  pthread_once(&fork_once, live_fork_install);
  pthread_mutex_lock(&live_lock);
  c->id = ++live_ids;
  c->live_prev = NULL;
  c->live_next = live_head;
  if (live_head) live_head->live_prev = c;
  live_head = c;
  pthread_mutex_unlock(&live_lock);
}

void hsm_chain_live_remove(hsmalloc_chain_t *c) {
  pthread_mutex_lock(&live_lock);
  if (c->live_prev) c->live_prev->live_next = c->live_next;
  else live_head = c->live_next;
  if (c->live_next) c->live_next->live_prev = c->live_prev;
  c->live_next = c->live_prev = NULL;
  pthread_mutex_unlock(&live_lock);
}

int hsm_chains_lock(int nonblocking) {
  if (nonblocking) return pthread_mutex_trylock(&live_lock) == 0 ? 0 : -1;
  pthread_mutex_lock(&live_lock);
  return 0;
}

void hsm_chains_unlock(void) { pthread_mutex_unlock(&live_lock); }

/* Oldest first (the list is newest first): the chain created just before *iter. */
int hsm_chain_stats_next(void **iter, void *out, unsigned *id, char *name, size_t cap) {
  hsmalloc_chain_t *c = live_head;
  if (c == NULL || *iter == live_head) return 1;
  while (c->live_next != NULL && c->live_next != *iter) c = c->live_next;
  *iter = c;
  *id = c->id;
  hsm_chain_fill_stats(c, out);
  if (c->name[0]) snprintf(name, cap, "%s", c->name);
  else snprintf(name, cap, "%u", c->id);
  ((hsmalloc_stats_t *)out)->heaps = 0;
  return 0;
}

int hsm_chain_node_of(const void *p) {
  unsigned kind = hsm_registry_kind(p), prior;
  if (!hsm_is_chain_kind(kind)) return -1;
  hsm_cregion_t *r = hsm_chain_region_of(p, kind, &prior);
  return r != NULL ? r->chain->numa_node : -1;
}

HSM_EXPORT int hsmalloc_chain_set_name(hsmalloc_chain_t *c, const char *name) {
  if (c == NULL) {
    errno = EINVAL;
    return -1;
  }
  if (c->magic != HSM_CHAIN_MAGIC)
    hsm_chain_die("hsmalloc_chain_set_name: not a chain (destroyed, or never created)", NULL, c);
  pthread_mutex_lock(&live_lock); /* a dump does not read it half-written */
  if (name == NULL) c->name[0] = '\0';
  else snprintf(c->name, sizeof c->name, "%s", name);
  pthread_mutex_unlock(&live_lock);
  return 0;
}
