/* security_probes.c — misuse of the heap, one probe per run, in the style of
 * the security tests of mimalloc-bench: `security_probes NAME`. A probe the
 * allocator detects ends in abort() with hsmalloc's one-line message; a probe
 * that comes back prints "undetected NAME" and exits 0 (test_security.py says
 * which outcome each probe must have, in the default mode and with
 * HSMALLOC_SECURE=1). Built with -O0 so that the compiler keeps every misuse as
 * written. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define SEGMENT ((uintptr_t)2 << 20)

static char global_buffer[256];

/* Keep the compiler from seeing through the pointers handed to free. */
static void *volatile sink;
static void *launder(void *p) {
  sink = p;
  return sink;
}

static void *free_in_thread(void *p) {
  free(p);
  return NULL;
}

static void double_free_immediate(void) {
  char *p = malloc(64);
  free(p);
  free(launder(p));
}

/* Other blocks of the page freed in between: p is no longer the head of the
 * list. */
static void double_free_delayed(void) {
  char *p = malloc(64), *q = malloc(64), *r = malloc(64);
  free(p);
  free(q);
  free(r);
  free(launder(p));
}

/* Many frees of other sizes and of the same size, then p again. */
static void double_free_after_many(void) {
  void *keep[200];
  char *p = malloc(48);
  for (int i = 0; i < 200; i++)
    keep[i] = malloc(i % 2 ? 48 : 200);
  free(p);
  for (int i = 0; i < 200; i++)
    free(keep[i]);
  free(launder(p));
}

/* Freed by another thread (which exits), then by its owner. */
static void double_free_other_thread(void) {
  char *p = malloc(96);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, free_in_thread, p) == 0, "pthread_create");
  pthread_join(t, NULL);
  free(launder(p));
}

/* Freed twice by a thread that does not own it (it sits in that thread's
 * cache). */
static void *free_twice(void *p) {
  free(p);
  free(launder(p));
  return NULL;
}
static void double_free_remote(void) {
  char *p = malloc(96);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, free_twice, p) == 0, "pthread_create");
  pthread_join(t, NULL);
}

/* Freed by its owner, then again by a thread that has never allocated (it has
 * no heap, so no cache to take the block): secure mode's free sends a block
 * that fails a check, and a free by such a thread, to the generic path, which
 * says what failed. */
static void double_free_heapless_thread(void) {
  char *p = malloc(96);
  free(p);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, free_in_thread, launder(p)) == 0,
        "pthread_create");
  pthread_join(t, NULL);
}

/* One byte past a 100-byte request, the block freed by a thread that has never
 * allocated. */
static void heap_overflow_heapless_thread(void) {
  char *p = malloc(100);
  ((char *)launder(p))[100] = 1;
  pthread_t t;
  CHECK(pthread_create(&t, NULL, free_in_thread, p) == 0, "pthread_create");
  pthread_join(t, NULL);
}

/* A small block freed by its thread, which exits: its page goes back with it.
 * Freed again by another thread: the page is not in use any more (its count of
 * carved blocks stays, only its reserved limit says so). */
static void *alloc_free_exit(void *arg) {
  void **out = arg;
  out[0] = malloc(96);
  free(out[0]);
  return NULL;
}
static void double_free_remote_page_gone(void) {
  void *p[1];
  pthread_t t;
  CHECK(pthread_create(&t, NULL, alloc_free_exit, p) == 0, "pthread_create");
  pthread_join(t, NULL);
  free(launder(p[0]));
}

static void double_free_small_size(void) { /* a request of 8 bytes or less */
  char *p = malloc(5);
  free(p);
  free(launder(p));
}

static void double_free_large(void) {
  char *p = malloc(200 * 1024);
  free(p);
  free(launder(p));
}

/* A large block freed by another thread is in transit to its owner: freed
 * again. */
static void double_free_large_remote(void) {
  char *p = malloc(300 * 1024);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, free_twice, p) == 0, "pthread_create");
  pthread_join(t, NULL);
}

static void double_free_huge(void) {
  char *p = malloc(8 << 20);
  free(p);
  free(launder(p));
}

static void double_free_aligned(void) {
  void *p = NULL;
  CHECK(posix_memalign(&p, 256, 100) == 0, "posix_memalign");
  free(p);
  free(launder(p));
}

static void double_free_by_realloc(void) {
  char *p = malloc(32);
  free(p);
  p = realloc(launder(p),
              24); /* fits: an allocator that does not check returns p */
  sink = p;
}

static void interior_pointer(void) {
  char *p = malloc(64);
  free((char *)launder(p) + 16);
}

static void unaligned_pointer(void) {
  char *p = malloc(64);
  free((char *)launder(p) + 1);
}

static void interior_pointer_large(void) {
  char *p = malloc(200 * 1024);
  free((char *)launder(p) + 4096);
}

static void interior_pointer_huge(void) {
  char *p = malloc(8 << 20);
  free((char *)launder(p) + 4096);
}

static void stack_pointer(void) {
  char local[64];
  free(launder(local));
}

static void *free_local(void *arg) {
  char local[64];
  (void)arg;
  free(launder(local));
  return NULL;
}
static void stack_pointer_thread(void) {
  pthread_t t;
  CHECK(pthread_create(&t, NULL, free_local, NULL) == 0, "pthread_create");
  pthread_join(t, NULL);
}

static void global_pointer(void) { free(launder(global_buffer + 16)); }

/* A block-aligned address in p's page, past the blocks carved so far: the
 * fourth block from the end of the 64 KiB page of a 64-byte class (pages start
 * on 64 KiB). Not p + 1000 blocks: in secure mode p is any block of the first
 * run, so that could leave the page and land on a free block of the next one
 * ("double free"). */
static char *uncarved_block(char *p) {
  return (char *)(((uintptr_t)p & ~(uintptr_t)0xffff) + 0x10000 - 4 * 64);
}

static void never_returned_block(void) {
  char *p = malloc(64);
  free(uncarved_block(launder(p)));
}

/* The same freed by another thread (with a heap of its own: its free takes the
 * path of another heap's blocks, which checks the page's bound as other threads
 * see it). */
static void *free_never_returned(void *p) {
  void *volatile own = malloc(64);
  free(own);
  free(uncarved_block(p));
  return NULL;
}
static void never_returned_block_remote(void) {
  pthread_t t;
  char *p = malloc(64);
  if (pthread_create(&t, NULL, free_never_returned, launder(p)) != 0)
    exit(3);
  pthread_join(t, NULL);
}

/* An address in the allocator's own metadata (the header of p's 2 MiB segment).
 */
static void metadata_pointer(void) {
  char *p = malloc(64);
  free(launder((void *)(((uintptr_t)p & ~(SEGMENT - 1)) + 256)));
}

/* A block's address with a bit above the 47 bits of user space set: free's fast
 * path masks it into the registry, so it finds the block's own segment and
 * page, whose block-start check must reject it (48: a block size that is no
 * power of two). */
static void above_user_space(void) {
  char *p = malloc(48);
  free(launder((void *)((uintptr_t)p | (uintptr_t)1 << 47)));
}

/* A write after free over the list link of a freed block, then allocations of
 * its size until the block comes back (few enough blocks that they share one
 * page, and that no hot class for the size is installed meanwhile). */
enum { OVERWRITE_BLOCKS = 300 };
static void free_list_overwrite(void) {
  static void *blocks[OVERWRITE_BLOCKS];
  for (int i = 0; i < OVERWRITE_BLOCKS; i++)
    blocks[i] = malloc(48);
  char *p = blocks[OVERWRITE_BLOCKS / 2];
  free(p);
  memset(launder(p), 0x41, 8);
  for (int i = 0; i < OVERWRITE_BLOCKS; i++) {
    char *q = malloc(48);
    memset(q, 0,
           48); /* an allocator that follows the forged link faults here */
  }
}

/* A write after free over the second word (where a free block keeps its mark).
 */
static void free_mark_overwrite(void) {
  static void *blocks[OVERWRITE_BLOCKS];
  for (int i = 0; i < OVERWRITE_BLOCKS; i++)
    blocks[i] = malloc(48);
  char *p = blocks[OVERWRITE_BLOCKS / 2];
  free(p);
  memset((char *)launder(p) + 8, 0, 8);
  for (int i = 0; i < OVERWRITE_BLOCKS; i++)
    blocks[i] = malloc(48);
}

/* A write at the last byte of a block's 2 MiB segment: past every block, where
 * a linear overflow runs into whatever is mapped next. */
static void segment_end_write(void) {
  char *p = malloc(64);
  volatile char *end = (char *)(((uintptr_t)p & ~(SEGMENT - 1)) + SEGMENT - 1);
  *end = 1;
}

/* A linear overflow off the end of a 40-byte request, over the next block's
 * first bytes (blocks of 48 are side by side), then the block freed. */
static void heap_overflow_next_block(void) {
  char *p = malloc(40), *q = malloc(40);
  memset(launder(p), 0x41, 40 + 24);
  free(p);
  free(q);
}

/* One byte past a 1000-byte request (the block has room after it). */
static void heap_overflow_one_byte(void) {
  char *p = malloc(1000);
  ((char *)launder(p))[1000] = 1;
  free(p);
}

/* Eight bytes past a 200000-byte (large) and an 8388000-byte (huge) request
 * (its mapping goes on for 608 bytes in the default mode). */
static void heap_overflow_large(void) {
  char *p = malloc(200000);
  memset((char *)launder(p) + 200000, 0x42, 8);
  free(p);
}

static void heap_overflow_huge(void) {
  char *p = malloc(8388000);
  memset((char *)launder(p) + 8388000, 0x43, 8);
  free(p);
}

/* One byte past the request, changed, for every request of 1 to 300 bytes, each
 * in a child process of its own: how many of them free aborts. The gap between
 * a request and its block's last word (where secure mode keeps the request)
 * runs from 0 to 15 bytes over these sizes, so the canary is checked whole, in
 * part, and not at all (the last word itself is overwritten then). */
enum { ONE_BYTE_SIZES = 300 };
/* One byte past every request of lo to hi bytes, changed, each in a child
 * process. */
static void heap_overflow_sizes(int lo, int hi) {
  int caught = 0;
  fflush(stdout);
  for (int n = lo; n <= hi; n++) {
    pid_t pid = fork();
    if (pid == 0) {
      freopen("/dev/null", "w", stderr);
      char *p = launder(malloc((size_t)n));
      p[n] = (char)~p[n];
      free(p);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    caught += WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  }
  printf("caught %d of %d\n", caught, hi - lo + 1);
}

static void heap_overflow_every_size(void) {
  heap_overflow_sizes(1, ONE_BYTE_SIZES);
}

/* The requests either side of secure malloc's own path's limit (4072 bytes,
 * whose block of 4096 with the canary is the class table's last) and of the
 * table's (4096): the checked path serves those above, with the same canary. */
static void heap_overflow_table_edge(void) { heap_overflow_sizes(4060, 4110); }

/* A write after free over the list link (or the free mark: at offset 8) of a
 * block in a thread's cache (of blocks it freed, the fourth newest), then the
 * thread's exit, which sends the cache home by runs of a page's blocks: the
 * block is met there, in the middle of its page's run, not by an allocation. */
enum { CACHED_BLOCKS = 64 };
static void *free_all_then_forge(void *offset) {
  static void *blocks[CACHED_BLOCKS];
  for (int i = 0; i < CACHED_BLOCKS; i++)
    blocks[i] = malloc(48);
  for (int i = 0; i < CACHED_BLOCKS; i++)
    free(blocks[i]);
  memset((char *)launder(blocks[CACHED_BLOCKS - 4]) + (uintptr_t)offset, 0x41,
         8);
  return NULL;
}

static void cache_forged(uintptr_t offset) {
  pthread_t t;
  pthread_create(&t, NULL, free_all_then_forge, (void *)offset);
  pthread_join(t, NULL);
}

static void cache_link_overwrite(void) { cache_forged(0); }
static void cache_mark_overwrite(void) { cache_forged(8); }

/* The same over a block on its way home: another thread frees this thread's
 * blocks and exits (they go to this heap's queue of other threads' frees), a
 * link among them is overwritten, then this thread allocates until it drains
 * its queue. */
static void *free_blocks(void *arg) { /* up to the first NULL */
  for (void **blocks = arg; *blocks != NULL; blocks++)
    free(*blocks);
  return NULL;
}

/* n blocks of 48 bytes of this thread's, into blocks (NULL-terminated: n + 1
 * slots), freed by another thread, which exits. */
static void freed_by_another_thread(void **blocks, int n) {
  for (int i = 0; i < n; i++)
    blocks[i] = malloc(48);
  pthread_t t;
  pthread_create(&t, NULL, free_blocks, blocks);
  pthread_join(t, NULL);
}

static void remote_link_overwrite(void) {
  static void *blocks[CACHED_BLOCKS + 1];
  freed_by_another_thread(blocks, CACHED_BLOCKS);
  memset(launder(blocks[CACHED_BLOCKS / 2]), 0x41, 8);
  for (int i = 0; i < 20000; i++)
    sink = malloc(48);
}

/* The same over a block waiting in the transfer cache: another thread frees 200
 * of this thread's blocks; its cache overflows into the transfer cache as one
 * batch of the first ones it freed (the rest go home at its exit), a link in
 * that batch is overwritten, then this thread allocates until its empty cache
 * takes the batch: the block is met as it is handed out. (Secure mode sends the
 * overflow home: the owner's drain meets the block in its queue.) */
enum { TRANSFER_BLOCKS = 200 };
static void transfer_link_overwrite(void) {
  static void *blocks[TRANSFER_BLOCKS + 1];
  freed_by_another_thread(blocks, TRANSFER_BLOCKS);
  memset(launder(blocks[10]), 0x41, 8);
  for (int i = 0; i < 20000; i++)
    sink = malloc(48);
}

/* A double free of a block waiting in the transfer cache (the batch of the
 * first blocks another thread freed): its free mark is set there. */
static void double_free_in_transfer(void) {
  static void *blocks[TRANSFER_BLOCKS + 1];
  freed_by_another_thread(blocks, TRANSFER_BLOCKS);
  free(blocks[10]);
}

/* The same over a block of a page that came back empty (secure mode keeps such
 * a page for reuse, its blocks on its list as they were freed): 3000 blocks (3
 * pages) freed by another thread, drained home by the slow path of a size not
 * allocated before, the free mark of the first page's first block cleared, then
 * 3000 blocks of the size again. (The default mode gives the page back and
 * carves it again, which rewrites the mark: nothing to catch.) */
enum { KEPT_BLOCKS = 3000 };
static void kept_page_mark_overwrite(void) {
  static void *blocks[KEPT_BLOCKS + 1];
  freed_by_another_thread(blocks, KEPT_BLOCKS);
  /* a class not allocated before: its slow path drains the queue, the pages are
   * empty */
  sink = malloc(3000);
  memset((char *)launder(blocks[0]) + 8, 0, 8);
  for (int i = 0; i < KEPT_BLOCKS; i++)
    sink = malloc(48);
}

/* 64 blocks of a fresh size: handed out in address order, or not. */
static void allocation_order(void) {
  char *prev = malloc(1008);
  int ascending = 1;
  for (int i = 1; i < 64; i++) {
    char *p = malloc(1008);
    ascending &= p > prev;
    prev = p;
  }
  printf("ascending %d\n", ascending);
}

static const struct {
  const char *name;
  void (*run)(void);
} probes[] = {
    {"double-free-immediate", double_free_immediate},
    {"double-free-delayed", double_free_delayed},
    {"double-free-after-many", double_free_after_many},
    {"double-free-other-thread", double_free_other_thread},
    {"double-free-remote", double_free_remote},
    {"double-free-heapless-thread", double_free_heapless_thread},
    {"double-free-small-size", double_free_small_size},
    {"double-free-remote-page-gone", double_free_remote_page_gone},
    {"double-free-large", double_free_large},
    {"double-free-large-remote", double_free_large_remote},
    {"double-free-huge", double_free_huge},
    {"double-free-aligned", double_free_aligned},
    {"double-free-by-realloc", double_free_by_realloc},
    {"interior-pointer", interior_pointer},
    {"unaligned-pointer", unaligned_pointer},
    {"interior-pointer-large", interior_pointer_large},
    {"interior-pointer-huge", interior_pointer_huge},
    {"stack-pointer", stack_pointer},
    {"stack-pointer-thread", stack_pointer_thread},
    {"global-pointer", global_pointer},
    {"never-returned-block", never_returned_block},
    {"never-returned-block-remote", never_returned_block_remote},
    {"metadata-pointer", metadata_pointer},
    {"above-user-space", above_user_space},
    {"free-list-overwrite", free_list_overwrite},
    {"free-mark-overwrite", free_mark_overwrite},
    {"segment-end-write", segment_end_write},
    {"allocation-order", allocation_order},
    {"heap-overflow-next-block", heap_overflow_next_block},
    {"heap-overflow-one-byte", heap_overflow_one_byte},
    {"heap-overflow-large", heap_overflow_large},
    {"heap-overflow-huge", heap_overflow_huge},
    {"heap-overflow-heapless-thread", heap_overflow_heapless_thread},
    {"heap-overflow-every-size", heap_overflow_every_size},
    {"heap-overflow-table-edge", heap_overflow_table_edge},
    {"cache-link-overwrite", cache_link_overwrite},
    {"cache-mark-overwrite", cache_mark_overwrite},
    {"remote-link-overwrite", remote_link_overwrite},
    {"transfer-link-overwrite", transfer_link_overwrite},
    {"double-free-in-transfer", double_free_in_transfer},
    {"kept-page-mark-overwrite", kept_page_mark_overwrite},
};

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: security_probes NAME|list\n");
    return 2;
  }
  for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
    if (strcmp(argv[1], "list") == 0) {
      puts(probes[i].name);
    } else if (strcmp(argv[1], probes[i].name) == 0) {
      probes[i].run();
      printf("undetected %s\n", probes[i].name);
      return 0;
    }
  }
  if (strcmp(argv[1], "list") == 0)
    return 0;
  fprintf(stderr, "security_probes: no probe '%s'\n", argv[1]);
  return 2;
}
