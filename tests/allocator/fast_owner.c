/* glibc gives a thread's pointer (its stack and TCB, cached) to a later thread
 * once the thread exits; free's fast path once took a block as the thread's own
 * when its page's fast owner was the thread pointer. Thread A makes N blocks of
 * 48 bytes, frees N/2 itself (reading its figures before the last LATE of them)
 * and exits; thread S (a small stack, so that it does not take A's from the
 * cache; it keeps a block of 256 KiB) exits after A; thread B (the default
 * stack: A's, so A's thread pointer) adopts S's heap (the last abandoned) and
 * frees A's other N/2: other-heap frees, counted in B's heap (its cache), never
 * pushed onto the pages of A's heap as their owner's. Prints "reused R a_id I
 * a_self F b_id J" then the rows of A's and B's heaps: "row ID allocs A frees F
 * remote_frees R". With the argument "fork": the same in a fork's child, where
 * glibc caches the stacks of the parent's other threads: S and A live (blocked)
 * in the parent, the child's thread B (A's stack) adopts S's heap, frees A's
 * blocks and prints "child reused R b_id J" and its row. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "hsmalloc.h"
#include "stages.h"

#define N 1000
#define LATE 10 /* A's frees after it read its figures */
static void *blocks[N];
static pthread_t a_self, b_self;
static unsigned a_id, s_id, b_id;
static unsigned long long a_self_frees;
static int s_release; /* S exits once released (under the stages' mutex) */

static unsigned my_heap(void) {
  hsmalloc_heap_stats_t me;
  CHECK(hsmalloc_heap_stats_self(&me) == 0, "no heap");
  return me.id;
}

static void *thread_s(void *arg) {
  (void)arg;
  char *volatile p = malloc(16);
  p[0] = 1;
  free(p);
  /* kept: S's heap holds more than A's, so that B, which adopts it, keeps it
   * rather than swap it for A's abandoned one (heap.c, hsm_heap_absorb) */
  static void *volatile s_keep;
  s_keep = malloc(256 * 1024);
  pthread_mutex_lock(&mu);
  s_id = my_heap();
  stage = 1; /* S has its own heap before A starts */
  pthread_cond_broadcast(&cv);
  while (!s_release)
    pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  return NULL;
}

static void *thread_a(void *arg) {
  (void)arg;
  a_self = pthread_self();
  for (int i = 0; i < N; i++) {
    blocks[i] = malloc(48);
    memset(blocks[i], 2, 48);
  }
  for (int i = 0; i < N / 2 - LATE; i++)
    free(blocks[i]);
  hsmalloc_heap_stats_t me;
  CHECK(hsmalloc_heap_stats_self(&me) == 0, "no heap");
  a_id = me.id;
  a_self_frees =
      me.frees; /* the thread's own fast-path frees, counted when it reads */
  for (int i = N / 2 - LATE; i < N / 2; i++)
    free(blocks[i]); /* counted at its exit */
  return NULL;
}

static void *thread_b(void *arg) {
  (void)arg;
  b_self = pthread_self();
  char *volatile p =
      malloc(16); /* B has its heap (S's) before it frees A's blocks */
  p[0] = 1;
  for (int i = N / 2; i < N; i++)
    free(blocks[i]);
  free(p);
  b_id = my_heap();
  return NULL;
}

static void row(unsigned id) {
  hsmalloc_heap_stats_t r;
  CHECK(hsmalloc_heap_stats_get(id, &r) == 0, "no heap %u", id);
  printf("row %u allocs %llu frees %llu remote_frees %llu\n", id,
         (unsigned long long)r.allocs, (unsigned long long)r.frees,
         (unsigned long long)r.remote_frees);
}

/* A of the fork case: makes its blocks, then waits (alive at the fork) */
static void *thread_a_waits(void *arg) {
  (void)arg;
  a_self = pthread_self();
  for (int i = 0; i < N; i++) {
    blocks[i] = malloc(48);
    memset(blocks[i], 2, 48);
  }
  a_id = my_heap();
  set_stage(3);
  wait_stage(4);
  return NULL;
}

static int in_child(void) {
  pthread_mutex_init(&mu, NULL); /* (the parent's threads may have held them) */
  pthread_cond_init(&cv, NULL);
  pthread_t b;
  CHECK(pthread_create(&b, NULL, thread_b, NULL) == 0, "create B");
  pthread_join(b, NULL);
  hsmalloc_heap_stats_t r;
  CHECK(hsmalloc_heap_stats_get(b_id, &r) == 0, "no heap %u", b_id);
  printf("child reused %d b_id %u s_id %u a_id %u\n",
         pthread_equal(a_self, b_self) != 0, b_id, s_id, a_id);
  row(b_id);
  return 0;
}

static int fork_case(void) {
  pthread_attr_t small;
  pthread_attr_init(&small);
  pthread_attr_setstacksize(&small, 256 * 1024);
  pthread_t s, a;
  CHECK(pthread_create(&s, &small, thread_s, NULL) == 0, "create S");
  wait_stage(1);
  CHECK(pthread_create(&a, NULL, thread_a_waits, NULL) == 0, "create A");
  wait_stage(3);
  fflush(stdout);
  pid_t pid = fork();
  CHECK(pid >= 0, "fork");
  if (pid == 0) {
    int rc = in_child();
    fflush(stdout);
    _exit(rc);
  }
  int status;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
            WEXITSTATUS(status) == 0,
        "child status %d", status);
  pthread_mutex_lock(&mu);
  s_release = 1;
  pthread_mutex_unlock(&mu);
  set_stage(4);
  pthread_join(a, NULL);
  pthread_join(s, NULL);
  return 0;
}

/* Another live thread's figures (docs/hsmalloc.md, "Statistics"): the frees
 * thread L makes of its own blocks are in its row at once, while it lives,
 * after its read of its own figures and after its exit; the process figures say
 * no running thread's frees are behind. Prints "live B after_read R after_exit
 * X behind_live 0 behind_after 0". */
static void *thread_l(void *arg) {
  (void)arg;
  for (int i = 0; i < N; i++)
    blocks[i] = malloc(48);
  for (int i = 0; i < N / 2; i++)
    free(blocks[i]);
  a_id = my_heap(); /* counts the N / 2 */
  for (int i = N / 2; i < N - 1; i++)
    free(blocks[i]); /* N / 2 - 1 more, one block kept */
  set_stage(1);
  wait_stage(2);
  (void)my_heap(); /* the thread reads its own figures */
  set_stage(3);
  wait_stage(4);
  free(blocks[N - 1]);
  return NULL;
}

static unsigned long long frees_of(unsigned id) {
  hsmalloc_heap_stats_t r;
  CHECK(hsmalloc_heap_stats_get(id, &r) == 0, "no heap %u", id);
  return r.frees;
}

/* heaps whose latest own frees the process figures say they leave out */
static unsigned long long frees_behind(void) {
  hsmalloc_stats_t st;
  CHECK(hsmalloc_stats_get(&st) == 0, "stats");
  return st.heaps_frees_behind;
}

static int live_case(void) {
  pthread_t l;
  CHECK(pthread_create(&l, NULL, thread_l, NULL) == 0, "create L");
  wait_stage(1);
  unsigned long long before = frees_of(a_id), behind_live = frees_behind();
  set_stage(2);
  wait_stage(3);
  unsigned long long after_read = frees_of(a_id);
  set_stage(4);
  pthread_join(l, NULL);
  printf("live %llu after_read %llu after_exit %llu behind_live %llu "
         "behind_after %llu\n",
         before, after_read, frees_of(a_id), behind_live, frees_behind());
  return 0;
}

int main(int argc, char **argv) {
  printf("start\n");
  if (argc > 1 && strcmp(argv[1], "live") == 0)
    return live_case();
  if (argc > 1 && strcmp(argv[1], "fork") == 0)
    return fork_case();
  pthread_attr_t small;
  pthread_attr_init(&small);
  pthread_attr_setstacksize(&small, 256 * 1024);
  pthread_t s, a, b;
  CHECK(pthread_create(&s, &small, thread_s, NULL) == 0, "create S");
  pthread_mutex_lock(&mu);
  while (stage < 1)
    pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  CHECK(pthread_create(&a, NULL, thread_a, NULL) == 0, "create A");
  pthread_join(a, NULL); /* A's heap abandoned, A's stack cached */
  pthread_mutex_lock(&mu);
  s_release = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  pthread_join(s,
               NULL); /* S's heap abandoned last: the next thread adopts it */
  CHECK(pthread_create(&b, NULL, thread_b, NULL) == 0, "create B");
  pthread_join(b, NULL);
  printf("reused %d a_id %u a_self %llu b_id %u s_id %u\n",
         pthread_equal(a_self, b_self) != 0, a_id, a_self_frees, b_id, s_id);
  row(a_id);
  row(b_id);
  return 0;
}
