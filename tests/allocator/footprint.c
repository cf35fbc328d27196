/* hsmalloc's resident footprint against what a program holds, counted in 4 KiB
 * pages with mincore over the segments the program's blocks lie in (their
 * header slice left out).
 *
 * exact: a fresh thread allocates 1600 blocks of 64 bytes (100 KiB), writes
 * them and frees them, 20 times; its heap's first 1024 allocations are a
 * hot-size window, which 64 takes all of. 64 is a fixed class of exactly 64
 * bytes, so no hot class is made for it and one set of pages holds the blocks:
 * two slices of 1024 blocks. Prints "resident N hot H" (H: hot rows of size
 * 64).
 *
 * placed: a thread carves 4 KiB of a page of 1024-byte blocks (4 blocks) and a
 * whole slice of 2048-byte blocks (32), frees them and exits (its empty pages
 * go back to their segment); the next thread, which takes the same heap, carves
 * a slice of 4096-byte blocks (16), a class of neither. Prints "resident N"
 * once its blocks are written.
 *
 * sizes: a fresh thread goes through three sizes in turn, as glibc-simple does: for
 * 16, 32 and 64 bytes, rounds of 25, then 400, then 1600 blocks allocated, written
 * and freed, SIZES_ALLOCS allocations of each count. Prints "resident N" at the end,
 * every block freed.
 *
 * bigleft: a fresh thread writes 3 blocks of 40,960 bytes (a fixed class above 8 KiB:
 * its page of two slices carves 120 KiB) and frees them; then 40 rounds of two blocks of
 * 16,384 bytes allocated, written and freed (each round one slow path, as the second
 * block finds the class's cache of one block empty), so that the class of 40,960 bytes,
 * idle, gives its page back; then one block of 12,288 bytes (a third class), written.
 * Prints "resident N" with that block live.
 *
 * onlarge: a fresh thread writes a block of 256 KiB (a large block: four slices) and
 * frees it, then writes one block of 22,528 bytes, whose class (above 8 KiB) takes a
 * page of three slices, placed on the freed block's resident ones. Prints "resident N"
 * with that block live.
 *
 * trim: the main thread, the only one (no transfer cache), allocates TRIM_BLOCKS
 * blocks of 64 bytes (a page of 1024 fills its slice, the rest go on a second page),
 * writes them and frees all but the last TRIM_LIVE, the second page's first (so that
 * its cache's oldest blocks are the second page's); then 40 rounds of two blocks of
 * 16,384 bytes (a slow path each), then 64 blocks of 1024 bytes (a new page, a slice
 * of them), written. Prints "resident N" with them live.
 *
 * start: the library's own resident memory once two threads have allocated a
 * block each: its writable data (the read-write mapping of libhsmalloc.so, in KiB of
 * /proc/self/smaps' Rss), its heap objects (the 1 MiB anonymous mapping they are carved
 * from) and its .bss past the file's end, in KiB written (from /proc/self/pagemap, over
 * each one's own range: the kernel may merge a neighbour's anonymous mapping into
 * either), and how many pages of the registry the segments' bytes lie on. Prints
 * "data_kib D heap_kib H bss_kib B registry_pages R".
 *
 * stack: a thread on a stack of fresh zero pages (mmap'd here) goes through
 * allocation slow paths of several sizes, every one of which reads the memory
 * pressure (run with HSMALLOC_PRESSURE_CHECK_MS=0; malloc and free already bound
 * by the main thread, so no lazy binding adds its frames); prints "depth B": the bytes
 * below the thread function's frame the allocator wrote, found as the lowest
 * nonzero byte of the stack's resident pages. A thread's stack pages stay resident
 * for its life, so the deepest call sets what every thread pays.
 *
 * text: the main thread and a second one go through the stack mode's sizes (16 B to
 * 3 MiB), a calloc, a realloc, an aligned block and a free of the other's blocks; prints
 * "text_kib T rodata_kib R clock_calls C": the resident KiB of libhsmalloc.so's code
 * (smaps' Rss of its r-xp mapping) and of its read-only data (the r--p mapping that
 * follows the code: .rodata, .eh_frame), and how many times the library called libc's clock_gettime (this
 * program defines clock_gettime, so the library's calls bind to it: it counts them and
 * reads the clock by the system call). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "hsmalloc.h"

#define SEGMENT ((uintptr_t)2 << 20)
#define SLICE ((uintptr_t)64 << 10)
#define MAX_SEGMENTS 16

static uintptr_t segments[MAX_SEGMENTS];
static int nsegments;

static void note_segment(const void *p) {
  uintptr_t s = (uintptr_t)p & ~(SEGMENT - 1);
  for (int i = 0; i < nsegments; i++)
    if (segments[i] == s)
      return;
  CHECK(nsegments < MAX_SEGMENTS, "more than %d segments", MAX_SEGMENTS);
  segments[nsegments++] = s;
}

/* 4 KiB pages resident in the noted segments, but their header slices */
static long resident(void) {
  static unsigned char vec[SEGMENT / 4096];
  long n = 0;
  for (int s = 0; s < nsegments; s++) {
    CHECK(mincore((void *)segments[s], SEGMENT, vec) == 0, "mincore");
    for (size_t i = SLICE / 4096; i < SEGMENT / 4096; i++)
      n += vec[i] & 1;
  }
  return n;
}

/* A block of size bytes, written whole and its segment noted. */
static void *written_block(size_t size) {
  void *p = malloc(size);
  CHECK(p != NULL, "malloc(%zu)", size);
  memset(p, 1, size);
  note_segment(p);
  return p;
}

/* Runs fn on a fresh thread (its own heap) and waits for it; returns the figure fn left
 * in exact_resident. */
static long exact_resident;

static long on_a_fresh_thread(void *(*fn)(void *)) {
  pthread_t t;
  CHECK(pthread_create(&t, NULL, fn, NULL) == 0, "pthread_create");
  CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  return exact_resident;
}

#define EXACT_BLOCKS 1600

static void *exact_thread(void *arg) {
  (void)arg;
  static void *blocks[EXACT_BLOCKS];
  for (int r = 0; r < 20; r++) {
    for (int i = 0; i < EXACT_BLOCKS; i++) {
      blocks[i] = malloc(64);
      CHECK(blocks[i] != NULL, "malloc(64)");
      memset(blocks[i], 1, 64);
      note_segment(blocks[i]);
    }
    for (int i = 0; i < EXACT_BLOCKS; i++)
      free(blocks[i]);
  }
  exact_resident = resident();
  return NULL;
}

static int hot_rows(size_t size) {
  hsmalloc_stats_t st;
  CHECK(hsmalloc_stats_get(&st) == 0, "hsmalloc_stats_get");
  int n = 0;
  for (uint64_t i = 0; i < st.hot_classes; i++)
    n += st.hot[i].size == size;
  return n;
}

static void exact(void) {
  long resident_pages = on_a_fresh_thread(exact_thread); /* before hot_rows reads */
  printf("resident %ld hot %d\n", resident_pages, hot_rows(64));
}

static const size_t PLACED_SIZE[3] = {1024, 2048, 4096};
static const int PLACED_COUNT[3] = {4, 32, 16};
static int placed_round;

static void *placed_thread(void *arg) {
  (void)arg;
  static void *blocks[32];
  int k = placed_round == 0 ? 0 : 2, last = placed_round == 0 ? 1 : 2;
  for (; k <= last; k++) {
    for (int i = 0; i < PLACED_COUNT[k]; i++) {
      blocks[i] = malloc(PLACED_SIZE[k]);
      CHECK(blocks[i] != NULL, "malloc(%zu)", PLACED_SIZE[k]);
      memset(blocks[i], 1, PLACED_SIZE[k]);
      note_segment(blocks[i]);
    }
    if (placed_round == 0)
      for (int i = 0; i < PLACED_COUNT[k]; i++)
        free(blocks[i]);
  }
  if (placed_round == 1) {
    exact_resident = resident();
    for (int i = 0; i < PLACED_COUNT[2]; i++)
      free(blocks[i]);
  }
  return NULL;
}

static void placed(void) {
  for (placed_round = 0; placed_round < 2; placed_round++) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, placed_thread, NULL) == 0, "pthread_create");
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  }
  printf("resident %ld\n", exact_resident);
}

/* allocations per count of blocks: 1.2 M from a size's first page to its second (at
 * 1600 blocks), more than hsmalloc's HSM_UNUSED_ALLOCS (2^20) */
#define SIZES_ALLOCS 600000

static void *sizes_thread(void *arg) {
  (void)arg;
  static const int counts[3] = {25, 400, 1600};
  static void *blocks[1600];
  for (size_t size = 16; size <= 64; size *= 2)
    for (int k = 0; k < 3; k++)
      for (int r = 0; r < SIZES_ALLOCS / counts[k]; r++) {
        for (int i = 0; i < counts[k]; i++) {
          blocks[i] = malloc(size);
          CHECK(blocks[i] != NULL, "malloc(%zu)", size);
          memset(blocks[i], 1, size);
          note_segment(blocks[i]);
        }
        for (int i = 0; i < counts[k]; i++)
          free(blocks[i]);
      }
  exact_resident = resident();
  return NULL;
}

static void sizes(void) {
  printf("resident %ld\n", on_a_fresh_thread(sizes_thread));
}

/* rounds of two blocks of 16,384 bytes allocated, written and freed: one slow path
 * each, as the second block finds the class's cache of one block empty */
static void slow_paths(int rounds) {
  for (int r = 0; r < rounds; r++) {
    void *p = malloc(16384), *q = malloc(16384);
    CHECK(p != NULL && q != NULL, "malloc(16384)");
    memset(p, 1, 16384);
    memset(q, 1, 16384);
    note_segment(p);
    note_segment(q);
    free(p);
    free(q);
  }
}

static void *bigleft_thread(void *arg) {
  (void)arg;
  void *big[3];
  for (int i = 0; i < 3; i++)
    big[i] = written_block(40960);
  for (int i = 0; i < 3; i++)
    free(big[i]);
  slow_paths(40);
  void *last = written_block(12288);
  exact_resident = resident();
  free(last);
  return NULL;
}

static void bigleft(void) {
  printf("resident %ld\n", on_a_fresh_thread(bigleft_thread));
}

static void *onlarge_thread(void *arg) {
  (void)arg;
  free(written_block(256 << 10));
  void *p = written_block(22528);
  exact_resident = resident();
  free(p);
  return NULL;
}

static void onlarge(void) {
  printf("resident %ld\n", on_a_fresh_thread(onlarge_thread));
}

#define TRIM_BLOCKS 1500
#define TRIM_LIVE 10

static void trim(void) {
  static void *small[TRIM_BLOCKS];
  for (int i = 0; i < TRIM_BLOCKS; i++) {
    small[i] = malloc(64);
    CHECK(small[i] != NULL, "malloc(64)");
    memset(small[i], 1, 64);
    note_segment(small[i]);
  }
  for (int i = TRIM_BLOCKS - TRIM_LIVE; i-- > 0;)
    free(small[i]);
  slow_paths(40);
  void *kib[64];
  for (int i = 0; i < 64; i++) {
    kib[i] = malloc(1024);
    CHECK(kib[i] != NULL, "malloc(1024)");
    memset(kib[i], 1, 1024);
    note_segment(kib[i]);
  }
  long n = resident();
  for (int i = 0; i < 64; i++)
    free(kib[i]);
  for (int i = TRIM_BLOCKS - TRIM_LIVE; i < TRIM_BLOCKS; i++)
    free(small[i]);
  printf("resident %ld\n", n);
}

#define HEAP_POOL ((uintptr_t)1 << 20) /* the heap objects' mapping (HSM_HEAP_POOL_CHUNK) */

/* This program defines mmap, so the library's calls bind to it (glibc's own, such as
 * thread stacks, do not): it notes where the first mapping of HEAP_POOL bytes, the heap
 * objects', went. The kernel may merge it into a neighbouring anonymous mapping (even
 * the library's .bss), so smaps cannot tell it apart. */
static uintptr_t heap_pool;

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  long p = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
  if (p == -1) return MAP_FAILED;
  if (len == HEAP_POOL && heap_pool == 0) heap_pool = (uintptr_t)p;
  return (void *)p;
}

static void *start_thread(void *arg) {
  void *p = malloc(16);
  CHECK(p != NULL, "malloc(16)");
  note_segment(p);
  free(p);
  return arg;
}

/* The end of libhsmalloc's file-backed data and of its .bss (its read-write PT_LOAD's
 * file and memory sizes), page-rounded: the library's .bss past the file's end is the
 * range between them, whatever anonymous mapping the kernel merged after it. */
static uintptr_t lib_file_end, lib_bss_end;

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  (void)arg;
  if (strstr(info->dlpi_name, "libhsmalloc.so") == NULL) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
      uintptr_t at = info->dlpi_addr + ph->p_vaddr;
      lib_file_end = (at + ph->p_filesz + 4095) & ~(uintptr_t)4095;
      lib_bss_end = (at + ph->p_memsz + 4095) & ~(uintptr_t)4095;
    }
  }
  return 1;
}

/* Pages of [lo, hi) this process wrote: present and mapped by it alone (/proc/self/pagemap
 * bits 63 and 56, readable without privilege). A page only read maps the shared zero
 * page, which is not exclusive. */
static long written_pages(uintptr_t lo, uintptr_t hi) {
  int fd = open("/proc/self/pagemap", O_RDONLY);
  CHECK(fd >= 0, "/proc/self/pagemap");
  long n = 0;
  for (uintptr_t a = lo; a < hi; a += 4096) {
    uint64_t e = 0;
    CHECK(pread(fd, &e, sizeof e, (off_t)(a / 4096 * sizeof e)) == sizeof e, "pagemap read");
    n += (e >> 63 & 1) && (e >> 56 & 1);
  }
  close(fd);
  return n;
}

/* In KiB: libhsmalloc's read-write file mapping, from /proc/self/smaps (its Rss counts
 * no page that was only read: those map the shared zero page); from the page map, the
 * heap objects' mapping and the library's .bss past the file's end; and the pages of its
 * registry (a byte per 2 MiB of address space, page aligned: a page per 8 GiB) that the
 * two segments' bytes lie on. */
static void start(void) {
  void *p = malloc(16);
  CHECK(p != NULL, "malloc(16)");
  note_segment(p);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, start_thread, NULL) == 0, "pthread_create");
  CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  free(p);
  FILE *f = fopen("/proc/self/smaps", "r");
  CHECK(f != NULL, "/proc/self/smaps");
  char line[512], perms[8], path[256];
  long data_kib = -1, *want = NULL;
  while (fgets(line, sizeof line, f)) {
    path[0] = 0;
    if (sscanf(line, "%*x-%*x %7s %*s %*s %*s %255s", perms, path) >= 1) {
      want = NULL;
      if (strcmp(perms, "rw-p") == 0 && strstr(path, "libhsmalloc.so") != NULL) {
        CHECK(data_kib < 0, "two read-write mappings of libhsmalloc.so");
        want = &data_kib;
      }
    } else if (want != NULL && strncmp(line, "Rss:", 4) == 0) {
      *want = strtol(line + 4, NULL, 10);
    }
  }
  fclose(f);
  CHECK(data_kib >= 0, "no read-write mapping of libhsmalloc.so");
  CHECK(heap_pool != 0, "the library mapped no %lu bytes for its heaps", (unsigned long)HEAP_POOL);
  CHECK(dl_iterate_phdr(find_lib, NULL) == 1 && lib_bss_end > lib_file_end,
        "no read-write segment of libhsmalloc.so with a .bss past its file");
  int registry_pages = 0;
  for (int i = 0; i < nsegments; i++) {
    int first = 1;
    for (int j = 0; j < i; j++)
      first &= segments[j] >> 33 != segments[i] >> 33;
    registry_pages += first;
  }
  printf("data_kib %ld heap_kib %ld bss_kib %ld registry_pages %d\n", data_kib,
         written_pages(heap_pool, heap_pool + HEAP_POOL) * 4,
         written_pages(lib_file_end, lib_bss_end) * 4, registry_pages);
}

#define STACK_BYTES ((size_t)256 << 10)
static uintptr_t stack_top_frame; /* an address in stack_thread's frame */

static void *stack_thread(void *arg) {
  volatile char here = 0;
  stack_top_frame = (uintptr_t)&here;
  static const size_t sizes[] = {16, 40, 200, 1000, 3000, 9000, 40000, 300000, 3 << 20};
  void *blocks[sizeof sizes / sizeof sizes[0]];
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    blocks[i] = malloc(sizes[i]);
    CHECK(blocks[i] != NULL, "malloc(%zu)", sizes[i]);
  }
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    free(blocks[i]);
  return arg;
}

static void stack(void) {
  free(malloc(16)); /* binds malloc's and free's PLT entries: the thread measures no lazy binding */
  uint8_t *base = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(base != MAP_FAILED, "mmap");
  pthread_attr_t attr;
  CHECK(pthread_attr_init(&attr) == 0 && pthread_attr_setstack(&attr, base, STACK_BYTES) == 0,
        "pthread_attr_setstack");
  pthread_t t;
  CHECK(pthread_create(&t, &attr, stack_thread, NULL) == 0, "pthread_create");
  CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  static unsigned char vec[STACK_BYTES / 4096];
  CHECK(mincore(base, STACK_BYTES, vec) == 0, "mincore");
  uintptr_t lowest = 0;
  for (size_t pg = 0; pg < STACK_BYTES / 4096 && lowest == 0; pg++)
    if (vec[pg] & 1)
      for (size_t i = pg * 4096; i < (pg + 1) * 4096 && lowest == 0; i++)
        if (base[i] != 0)
          lowest = (uintptr_t)(base + i);
  CHECK(lowest != 0 && lowest < stack_top_frame, "no write below the thread's frame");
  printf("depth %lu\n", (unsigned long)(stack_top_frame - lowest));
}

static long clock_calls;

int clock_gettime(clockid_t id, struct timespec *ts) {
  clock_calls++;
  return (int)syscall(SYS_clock_gettime, id, ts);
}

static void *text_thread(void *arg) {
  free(arg); /* the main thread's block */
  stack_thread(NULL);
  return malloc(100);
}

static void text(void) {
  stack_thread(NULL);
  void *p = calloc(100, 8), *q = NULL;
  CHECK(p != NULL && posix_memalign(&q, 256, 1000) == 0, "calloc, posix_memalign");
  p = realloc(p, 5000);
  CHECK(p != NULL, "realloc");
  pthread_t t;
  void *theirs = NULL;
  CHECK(pthread_create(&t, NULL, text_thread, p) == 0, "pthread_create");
  CHECK(pthread_join(t, &theirs) == 0, "pthread_join");
  free(theirs);
  free(q);
  FILE *f = fopen("/proc/self/smaps", "r");
  CHECK(f != NULL, "/proc/self/smaps");
  char line[512];
  long text_kib = -1, rodata_kib = -1, *want = NULL;
  unsigned long text_end = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char perms[8];
    if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3) {
      int lib = strstr(line, "libhsmalloc.so") != NULL;
      want = NULL;
      if (lib && strcmp(perms, "r-xp") == 0) {
        want = &text_kib;
        text_end = hi;
      }
      if (lib && strcmp(perms, "r--p") == 0 && lo == text_end) want = &rodata_kib;
    } else if (want != NULL && strncmp(line, "Rss:", 4) == 0) {
      *want = strtol(line + 4, NULL, 10);
    }
  }
  fclose(f);
  CHECK(text_kib >= 0 && rodata_kib >= 0, "no r-xp or read-only data mapping of libhsmalloc.so");
  printf("text_kib %ld rodata_kib %ld clock_calls %ld\n", text_kib, rodata_kib, clock_calls);
}

int main(int argc, char **argv) {
  CHECK(argc == 2, "usage: footprint exact|placed|sizes|bigleft|onlarge|trim|start|stack|text");
  if (strcmp(argv[1], "exact") == 0)
    exact();
  else if (strcmp(argv[1], "placed") == 0)
    placed();
  else if (strcmp(argv[1], "sizes") == 0)
    sizes();
  else if (strcmp(argv[1], "bigleft") == 0)
    bigleft();
  else if (strcmp(argv[1], "onlarge") == 0)
    onlarge();
  else if (strcmp(argv[1], "trim") == 0)
    trim();
  else if (strcmp(argv[1], "start") == 0)
    start();
  else if (strcmp(argv[1], "stack") == 0)
    stack();
  else if (strcmp(argv[1], "text") == 0)
    text();
  else
    CHECK(0, "unknown mode %s", argv[1]);
  return 0;
}
