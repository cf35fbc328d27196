/* The clock, read through the vDSO's own entry point.
 *
 * libc's clock_gettime is a wrapper around the same vDSO function, but it lies on a
 * page of libc's text that a program which never reads the clock leaves unmapped, and
 * the first call makes the kernel map the 64 KiB of libc around it (fault-around): 64
 * KiB more resident in every process, for a wrapper. The vDSO is mapped and read by
 * the dynamic linker in every process already; its symbol is looked up once, at the
 * library's start, through its hash table (the x86-64 and most kernels' vDSOs carry
 * DT_HASH); a vDSO without it, or without the symbol, leaves libc's function. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

#include "internal.h"

typedef int (*clock_fn_t)(clockid_t, struct timespec *);
static clock_fn_t clock_fn = clock_gettime;

#if defined(__x86_64__)
#define VDSO_CLOCK "__vdso_clock_gettime"
#elif defined(__aarch64__)
#define VDSO_CLOCK "__kernel_clock_gettime"
#endif

#ifdef VDSO_CLOCK
/* The address of the vDSO's function `name`, NULL where it cannot be found. */
static void *vdso_symbol(const char *name) {
  const uint8_t *image = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
  if (image == NULL) return NULL;
  const ElfW(Ehdr) *eh = (const void *)image;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) return NULL;
  const ElfW(Phdr) *ph = (const void *)(image + eh->e_phoff);
  uintptr_t bias = 0;
  const ElfW(Dyn) *dyn = NULL;
  int loaded = 0;
  for (int i = 0; i < eh->e_phnum; i++) {
    if (ph[i].p_type == PT_LOAD && !loaded) {
      bias = (uintptr_t)image + ph[i].p_offset - ph[i].p_vaddr;
      loaded = 1;
    } else if (ph[i].p_type == PT_DYNAMIC) {
      dyn = (const void *)(image + ph[i].p_offset);
    }
  }
  if (!loaded || dyn == NULL) return NULL;
  const ElfW(Sym) *sym = NULL;
  const char *str = NULL;
  const Elf32_Word *hash = NULL; /* DT_HASH: nbucket, nchain (the symbols' count), ... */
  for (; dyn->d_tag != DT_NULL; dyn++) {
    if (dyn->d_tag == DT_SYMTAB) sym = (const void *)(bias + dyn->d_un.d_ptr);
    if (dyn->d_tag == DT_STRTAB) str = (const void *)(bias + dyn->d_un.d_ptr);
    if (dyn->d_tag == DT_HASH) hash = (const void *)(bias + dyn->d_un.d_ptr);
  }
  if (sym == NULL || str == NULL || hash == NULL) return NULL;
  for (Elf32_Word i = 0; i < hash[1]; i++) {
    if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || sym[i].st_shndx == SHN_UNDEF) continue;
    if (strcmp(str + sym[i].st_name, name) == 0) return (void *)(bias + sym[i].st_value);
  }
  return NULL;
}
#endif

void hsm_clock_init(void) {
#ifdef VDSO_CLOCK
  void *f = vdso_symbol(VDSO_CLOCK);
  if (f != NULL) clock_fn = (clock_fn_t)f;
#endif
}

uint64_t hsm_now_ms(void) {
  struct timespec ts;
  clock_fn(CLOCK_MONOTONIC_COARSE, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
