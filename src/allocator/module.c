/* Which loaded modules may get packed blocks from operator new.
 *
 * ::operator new(size_t) promises 16-byte alignment, and clang (and the compilers built
 * on it: icx, AOCC) rely on it when they initialize a new object (movaps); GCC does
 * not. A module whose ELF `.comment` names GCC and nothing else was compiled by GCC
 * only, so the packed classes (8-byte aligned) are safe for the `new` it calls. No
 * `.comment` (Debian strips it), an unreadable file or any other compiler or linker
 * named there: 16, as promised.
 *
 * Asked once per call site and heap, when the site table learns a site (site.c), from
 * inside operator new: nothing here allocates. dl_iterate_phdr finds the module
 * holding the return address (outside our lock: a callback of someone else's
 * dl_iterate_phdr may call new); the file is read with raw syscalls into a fixed
 * buffer, and only if its loaded segments are those in memory (not rebuilt since); the
 * verdict is cached per load base and address range (and the range of the last one in
 * each heap: hsm_module_memo_t). A module unloaded and another loaded at its base is
 * caught by glibc's count of unloads (dlpi_subs): when it moved, a cached verdict is
 * kept only if the file is still the same (device and inode). A module that defines
 * operator new itself (a wrapper such as heapscope's recorder, preloaded before us)
 * calls our new for code we cannot see: 16. The heaps' site tables remember verdicts
 * by return address, so dlclose is interposed: the call sites in the code it unloaded
 * are forgotten in every heap, and the cached ranges are checked anew (a library
 * loaded there later, built by another compiler, has its sites learned anew).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define MODULES     64   /* cached verdicts (round-robin replacement when full) */
#define PATH_CAP    512  /* a longer module path: no verdict, 16 */
#define COMMENT_CAP 4096 /* a longer .comment: 16 */
#define LOCK_TRIES  100000

typedef struct {
  uintptr_t base;
  uintptr_t lo, hi;        /* the module's loaded segments */
  unsigned long gen;       /* `unloads` when last found there */
  unsigned long long subs; /* dlpi_subs when last checked */
  dev_t dev;
  ino_t ino;
  int packed;
  int used;
} module_t;

HSM_BIG_BSS static module_t modules[MODULES];
static unsigned next_victim;
static atomic_flag lock = ATOMIC_FLAG_INIT;
HSM_BIG_BSS static char comment[COMMENT_CAP]; /* under the lock */
/* dlcloses (below: counted before each, and after one that unloaded something); while
 * the count stands, a pc inside a cached module's segments needs no dl_iterate_phdr
 * (two sites sharing a table slot relearn at every turn) */
_Atomic unsigned long hsm_module_unloads;

typedef struct {
  uintptr_t pc, base;
  unsigned long long subs;
  uintptr_t lo, hi;
  uint64_t layout; /* of the loaded segments: the file must still be the one loaded */
  int found;       /* 1: name holds the path; -1: the path is too long or the module wraps new */
  char name[PATH_CAP];
} query_t;

/* Whether the module defines `name` in its dynamic symbols (its GNU hash table, in
 * memory): 1, 0, or -1 without a GNU hash table. */
static int defines(const struct dl_phdr_info *info, const char *name) {
  const ElfW(Dyn) *dyn = NULL;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (dyn == NULL) return 0; /* nothing exported */
  const uint32_t *gh = NULL;
  const ElfW(Sym) *syms = NULL;
  const char *strs = NULL;
  for (; dyn->d_tag != DT_NULL; dyn++) {
    uintptr_t v = dyn->d_un.d_ptr; /* ld.so relocated it, unless it could not write */
    if (v < info->dlpi_addr) v += info->dlpi_addr;
    if (dyn->d_tag == DT_GNU_HASH) gh = (const uint32_t *)v;
    else if (dyn->d_tag == DT_SYMTAB) syms = (const ElfW(Sym) *)v;
    else if (dyn->d_tag == DT_STRTAB) strs = (const char *)v;
  }
  if (gh == NULL || syms == NULL || strs == NULL || gh[0] == 0) return -1;
  uint32_t nbuckets = gh[0], first = gh[1], bloom_words = gh[2];
  const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gh + 4) + bloom_words);
  const uint32_t *chain = buckets + nbuckets;
  uint32_t h = 5381;
  for (const char *c = name; *c; c++) h = h * 33 + (unsigned char)*c;
  uint32_t i = buckets[h % nbuckets];
  if (i < first) return 0;
  for (;; i++) {
    uint32_t hi = chain[i - first];
    if ((hi | 1) == (h | 1) && strcmp(strs + syms[i].st_name, name) == 0)
      return syms[i].st_shndx != SHN_UNDEF;
    if (hi & 1) return 0;
  }
}

static uint64_t layout_step(uint64_t h, const ElfW(Phdr) * ph) {
  if (ph->p_type != PT_LOAD) return h;
  uint64_t v[] = {ph->p_offset, ph->p_vaddr, ph->p_filesz, ph->p_memsz, ph->p_flags};
  for (size_t k = 0; k < sizeof v / sizeof *v; k++) h = (h ^ v[k]) * 0x100000001b3ull;
  return h;
}

static int find_module(struct dl_phdr_info *info, size_t size, void *arg) {
  query_t *q = arg;
  (void)size;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || q->pc - (info->dlpi_addr + ph->p_vaddr) >= ph->p_memsz) continue;
    const char *name = info->dlpi_name;
    if (name == NULL || name[0] == 0) name = "/proc/self/exe"; /* the main program */
    size_t len = strlen(name);
    q->base = info->dlpi_addr;
    q->subs = info->dlpi_subs;
    q->found = len < PATH_CAP ? 1 : -1;
    q->layout = 0xcbf29ce484222325ull;
    q->lo = UINTPTR_MAX;
    for (ElfW(Half) k = 0; k < info->dlpi_phnum; k++) {
      const ElfW(Phdr) *seg = &info->dlpi_phdr[k];
      q->layout = layout_step(q->layout, seg);
      if (seg->p_type != PT_LOAD) continue;
      uintptr_t lo = info->dlpi_addr + seg->p_vaddr;
      if (lo < q->lo) q->lo = lo;
      if (lo + seg->p_memsz > q->hi) q->hi = lo + seg->p_memsz;
    }
    /* a module with an operator new of its own forwards its callers' new (a profiler's
     * wrapper): their compiler is unknown */
    if (defines(info, "_Znwm") != 0 || defines(info, "_Znam") != 0) q->found = -1;
    if (q->found == 1) memcpy(q->name, name, len + 1);
    return 1;
  }
  return 0;
}

static int read_at(int fd, void *buf, size_t n, uint64_t off) {
  return syscall(SYS_pread64, fd, buf, n, (off_t)off) == (long)n;
}

/* Every string names GCC ("GCC: (...) 12.2.0") and none another compiler. */
static int gcc_only(const char *s, size_t n) {
  static const char *const others[] = {"clang", "LLVM", "Intel", "AOCC"};
  int any = 0;
  for (size_t i = 0; i < n;) {
    const char *end = memchr(s + i, 0, n - i);
    size_t len = end != NULL ? (size_t)(end - (s + i)) : n - i;
    if (len > 0) {
      if (len < 5 || memcmp(s + i, "GCC: ", 5) != 0) return 0;
      for (size_t k = 0; k < sizeof others / sizeof *others; k++)
        if (memmem(s + i, len, others[k], strlen(others[k])) != NULL) return 0;
      any = 1;
    }
    i += len + 1;
  }
  return any;
}

/* The verdict from the file's .comment section (section headers read one at a time:
 * once per module, no buffer to size). */
static int comment_verdict(int fd, uint64_t layout) {
  ElfW(Ehdr) eh;
  if (!read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(ElfW(Shdr)) ||
      eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_shstrndx >= eh.e_shnum)
    return 0;
  /* a file rebuilt since it was loaded (perhaps by another compiler) says nothing */
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    ElfW(Phdr) ph;
    if (!read_at(fd, &ph, sizeof ph, eh.e_phoff + (uint64_t)i * sizeof ph)) return 0;
    h = layout_step(h, &ph);
  }
  if (h != layout) return 0;
  ElfW(Shdr) strs;
  if (!read_at(fd, &strs, sizeof strs, eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof strs))
    return 0;
  for (unsigned i = 1; i < eh.e_shnum; i++) {
    ElfW(Shdr) sh;
    char name[sizeof ".comment"];
    if (!read_at(fd, &sh, sizeof sh, eh.e_shoff + (uint64_t)i * sizeof sh)) return 0;
    /* .comment is PROGBITS, not loaded: skip the others without reading names */
    if (sh.sh_type != SHT_PROGBITS || (sh.sh_flags & SHF_ALLOC) ||
        sh.sh_name + sizeof name > strs.sh_size)
      continue;
    if (!read_at(fd, name, sizeof name, strs.sh_offset + sh.sh_name) ||
        memcmp(name, ".comment", sizeof name) != 0)
      continue;
    if (sh.sh_size == 0 || sh.sh_size > COMMENT_CAP) return 0;
    if (!read_at(fd, comment, sh.sh_size, sh.sh_offset)) return 0;
    return gcc_only(comment, sh.sh_size);
  }
  return 0; /* no .comment */
}

/* Under the lock: the module's cached entry, checked or made anew; NULL (16) when its
 * file cannot be opened (not cached: it may come back). */
static const module_t *verdict(const query_t *q, unsigned long gen) {
  module_t *m = NULL;
  for (unsigned i = 0; i < MODULES; i++)
    if (modules[i].used && modules[i].base == q->base) m = &modules[i];
  if (q->found != 1) { /* no file to read: 16, remembered for the range */
    if (m == NULL) m = &modules[next_victim++ % MODULES];
    *m = (module_t){.base = q->base, .subs = q->subs, .packed = 0, .used = 1};
  } else if (m == NULL || m->subs != q->subs) {
    int fd = (int)syscall(SYS_openat, AT_FDCWD, q->name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (syscall(SYS_fstat, fd, &st) != 0) {
      syscall(SYS_close, fd);
      return NULL;
    }
    /* the same file at the same base keeps its verdict */
    if (m == NULL || m->dev != st.st_dev || m->ino != st.st_ino) {
      int packed = comment_verdict(fd, q->layout);
      if (m == NULL) m = &modules[next_victim++ % MODULES];
      *m = (module_t){
          .base = q->base, .dev = st.st_dev, .ino = st.st_ino, .packed = packed, .used = 1};
    }
    syscall(SYS_close, fd);
  }
  m->subs = q->subs, m->lo = q->lo, m->hi = q->hi, m->gen = gen;
  return m;
}

/* bounded: a lock left held by a thread that died in fork's child gives 16, not a hang */
static int lock_take(void) {
  for (unsigned tries = 0; atomic_flag_test_and_set_explicit(&lock, memory_order_acquire);)
    if (++tries == LOCK_TRIES) return 0;
    else sched_yield();
  return 1;
}

int hsm_module_new_packed(uintptr_t pc, hsm_module_memo_t *memo) {
  unsigned long gen = atomic_load_explicit(&hsm_module_unloads, memory_order_acquire);
  if (memo->gen == gen && pc - memo->lo < memo->hi - memo->lo) return memo->packed;
  if (!lock_take()) return 0;
  const module_t *hit = NULL;
  for (unsigned i = 0; i < MODULES && hit == NULL; i++)
    if (modules[i].used && modules[i].gen == gen &&
        pc - modules[i].lo < modules[i].hi - modules[i].lo)
      hit = &modules[i];
  if (hit == NULL) {
    atomic_flag_clear_explicit(&lock, memory_order_release);
    query_t q = {.pc = pc};
    dl_iterate_phdr(find_module, &q);
    if (q.found == 0 || !lock_take()) return 0;
    hit = verdict(&q, gen);
  }
  int packed = hit != NULL ? hit->packed : 0;
  if (hit != NULL) *memo = (hsm_module_memo_t){hit->lo, hit->hi, hit->gen, packed};
  atomic_flag_clear_explicit(&lock, memory_order_release);
  return packed;
}

/* dlclose: the executable ranges loaded before, and which of them are still there */
#define RANGES 1024
typedef struct {
  uintptr_t lo, hi;
  int kept;
} range_t;
HSM_BIG_BSS static range_t ranges[RANGES];
static unsigned range_count;
static int range_overflow;
static unsigned long long range_subs;
static pthread_mutex_t close_lock = PTHREAD_MUTEX_INITIALIZER;

static int each_code_range(struct dl_phdr_info *info, int snap) {
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (snap) {
      if (range_count == RANGES) range_overflow = 1;
      else ranges[range_count++] = (range_t){lo, hi, 0};
    } else {
      for (unsigned k = 0; k < range_count; k++)
        if (ranges[k].lo == lo && ranges[k].hi == hi) ranges[k].kept = 1;
    }
  }
  range_subs = info->dlpi_subs;
  return 0;
}

static int snap_ranges(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size, (void)arg;
  return each_code_range(info, 1);
}

static int keep_ranges(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size, (void)arg;
  return each_code_range(info, 0);
}

HSM_EXPORT int dlclose(void *handle) {
  static int (*next)(void *);
  if (next == NULL) next = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
  if (next == NULL) return -1;
  /* a destructor's dlclose: the outer call sees what this one unloads */
  static __thread int closing;
  if (closing) return next(handle);
  closing = 1;
  pthread_mutex_lock(&close_lock);
  range_count = 0;
  range_overflow = 0;
  dl_iterate_phdr(snap_ranges, NULL);
  unsigned long long subs = range_subs;
  /* before too: a library loaded where this one was, while it is being closed */
  atomic_fetch_add_explicit(&hsm_module_unloads, 1, memory_order_release);
  int rc = next(handle);
  dl_iterate_phdr(keep_ranges, NULL);
  if (range_subs != subs) { /* something was unloaded */
    atomic_fetch_add_explicit(&hsm_module_unloads, 1, memory_order_release);
    if (range_overflow) hsm_sites_forget(0, UINTPTR_MAX);
    for (unsigned k = 0; k < range_count; k++)
      if (!ranges[k].kept) hsm_sites_forget(ranges[k].lo, ranges[k].hi);
  }
  pthread_mutex_unlock(&close_lock);
  closing = 0;
  return rc;
}
