/* The allocator's event trace (HSMALLOC_TRACE=FILE, "%p" the process id): one text
 * line per internal event, for replaying or plotting what the allocator did with
 * its memory (the MPC allocator's "events trace of internals"):
 *
 *   # hsmalloc trace pid P: t_us event heap addr bytes
 *   1234 seg_new 1 0x7f..00000 2097152      a segment mapped from the OS for heap 1
 *   1240 seg_reuse 2 0x7f..00000 2097152    taken from the cache of empty segments
 *   1300 seg_free 2 0x7f..00000 2097152     an empty segment back to the cache
 *   1301 page_new 2 0x7f..10000 65536       a page (run of slices) taken by heap 2
 *   1350 page_free 2 0x7f..10000 65536      a page back to its segment
 *   1400 purge - 0x7f..00000 2097152        memory given back to the OS (MADV_DONTNEED)
 *   1500 map - 0x7f..00000 8388608          address space mapped (segments, huge blocks)
 *   1600 unmap - 0x7f..00000 2097152        ... and unmapped
 *   1700 pressure - 3 42                    pressure level 3, headroom 4.2% (per mille)
 *
 * t_us is microseconds since the first event. Lines are formatted into a 64 KiB
 * buffer under a lock of their own (a leaf: nothing else is taken while it is held)
 * and written with write(2) when it fills and at exit; nothing allocates. Off by
 * default: then each event site costs one load and a branch, on slow paths only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

int hsm_trace_on;
static int trace_fd = -1;
static int exiting; /* after the exit-time flush, every event is written at once */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
HSM_BIG_BSS static char buf[65536];
static size_t used;
static uint64_t t0_ns;

static const char *names[] = {"seg_new", "seg_reuse", "seg_free", "page_new", "page_free",
                              "purge",   "map",       "unmap",    "pressure"};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void flush_locked(void) {
  for (size_t done = 0; done < used;) {
    ssize_t w = write(trace_fd, buf + done, used - done);
    if (w <= 0 && errno != EINTR) break;
    if (w > 0) done += (size_t)w;
  }
  used = 0;
}

static void open_trace(void) {
  char path[sizeof hsm_options.trace_file + 16];
  const char *pid = strstr(hsm_options.trace_file, "%p");
  if (pid != NULL)
    snprintf(path, sizeof path, "%.*s%d%s", (int)(pid - hsm_options.trace_file),
             hsm_options.trace_file, (int)getpid(), pid + 2);
  else snprintf(path, sizeof path, "%s", hsm_options.trace_file);
  trace_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (trace_fd < 0) {
    static const char msg[] = "hsmalloc: HSMALLOC_TRACE: the file cannot be written; no trace\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    hsm_trace_on = 0;
    return;
  }
  t0_ns = now_ns();
  used = (size_t)snprintf(buf, sizeof buf, "# hsmalloc trace pid %d: t_us event heap addr bytes\n",
                          (int)getpid());
}

/* From hsm_options_read (twice: the second read may see the variable first). */
void hsm_trace_start(void) {
  if (hsm_options.trace_file[0] == '\0' || trace_fd >= 0) return;
  pthread_mutex_lock(&trace_lock);
  hsm_trace_on = 1;
  if (trace_fd < 0) open_trace();
  pthread_mutex_unlock(&trace_lock);
}

void hsm_trace_event(int kind, const hsm_heap_t *heap, const void *addr, uint64_t bytes) {
  int err = errno;
  pthread_mutex_lock(&trace_lock);
  if (trace_fd >= 0) {
    char line[128];
    char who[16] = "-";
    if (heap != NULL) snprintf(who, sizeof who, "%u", heap->id);
    int n = kind == HSM_EV_PRESSURE
                ? snprintf(line, sizeof line, "%llu %s - %llu %llu\n",
                           (unsigned long long)((now_ns() - t0_ns) / 1000), names[kind],
                           (unsigned long long)(uintptr_t)addr, (unsigned long long)bytes)
                : snprintf(line, sizeof line, "%llu %s %s %p %llu\n",
                           (unsigned long long)((now_ns() - t0_ns) / 1000), names[kind], who, addr,
                           (unsigned long long)bytes);
    if (n > 0) {
      if (used + (size_t)n > sizeof buf) flush_locked();
      memcpy(buf + used, line, (size_t)n);
      used += (size_t)n;
      if (exiting) flush_locked();
    }
  }
  pthread_mutex_unlock(&trace_lock);
  errno = err;
}

/* At exit (the destructor) and before a fork, so the child starts with an empty buffer. */
void hsm_trace_flush(void) {
  if (!hsm_trace_on) return;
  pthread_mutex_lock(&trace_lock);
  if (trace_fd >= 0) flush_locked();
  pthread_mutex_unlock(&trace_lock);
}

static void trace_fork_prepare(void) {
  hsm_trace_flush();
  pthread_mutex_lock(&trace_lock);
}
static void trace_fork_parent(void) { pthread_mutex_unlock(&trace_lock); }
/* The child writes a trace of its own (with "%p" in the name; without, it would write
 * over the parent's file: the child's trace is then off). */
static void trace_fork_child(void) {
  pthread_mutex_init(&trace_lock, NULL);
  used = 0;
  if (trace_fd >= 0) close(trace_fd);
  trace_fd = -1;
  if (strstr(hsm_options.trace_file, "%p") != NULL) open_trace();
  else hsm_trace_on = 0;
}

__attribute__((constructor)) static void trace_install(void) {
  (void)hsm_heap_get(); /* the options are read */
  if (hsm_trace_on) hsm_atfork(trace_fork_prepare, trace_fork_parent, trace_fork_child);
}

__attribute__((destructor(102))) static void trace_at_exit(void) {
  if (!hsm_trace_on) return;
  pthread_mutex_lock(&trace_lock);
  exiting = 1;
  if (trace_fd >= 0) flush_locked();
  pthread_mutex_unlock(&trace_lock);
}
