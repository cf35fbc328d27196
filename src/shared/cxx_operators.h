/*
 * cxx_operators.h — the replaceable C++ operators new and delete, by their mangled
 * names, and which of them each one's standard default calls; shared by the recorder
 * and libhsmalloc, which both define every variant.
 *
 * A program may replace operator new(size_t) and operator delete(void*) only (FreeFem++
 * does, to count its pointers): the other variants' defaults then reach the program's
 * (sized delete calls delete(ptr), new[] calls new(size), nothrow new calls new in a
 * try block, ...), and a library defining them must not skip it.
 * cxx_ops_reaching_replaced says which variants do, so that each library sends those
 * on to the next definition (libstdc++'s default).
 * Needs _GNU_SOURCE and <dlfcn.h> before it.
 */
#ifndef HS_SHARED_CXX_OPERATORS_H
#define HS_SHARED_CXX_OPERATORS_H

enum {
  NEW, NEW_ARR, NEW_NT, NEW_ARR_NT, NEW_AL, NEW_ARR_AL, NEW_AL_NT, NEW_ARR_AL_NT,
  DEL, DEL_ARR, DEL_SZ, DEL_ARR_SZ, DEL_NT, DEL_ARR_NT,
  DEL_AL, DEL_ARR_AL, DEL_SZ_AL, DEL_ARR_SZ_AL, DEL_AL_NT, DEL_ARR_AL_NT, N_OPS
};

static const char *const cxx_op_names[N_OPS] = {
  "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
  "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
  "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
  "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",
  "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t",
  "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t",
  "_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

/* The operator each variant's default calls (-1: none, it is replaceable on its own);
 * a callee comes before its callers. */
static const signed char cxx_op_default_calls[N_OPS] = {
  -1, NEW, NEW, NEW_ARR, -1, NEW_AL, NEW_AL, NEW_ARR_AL,
  -1, DEL, DEL, DEL_ARR, DEL, DEL_ARR, -1, DEL_AL, DEL_AL, DEL_ARR_AL, DEL_AL, DEL_ARR_AL,
};

/* The first definition of `name` is in another object than `self` (the library asking)
 * and the one whose malloc the program uses (a peer allocator's or a profiler's
 * operators, preloaded before us, are no replacement). */
static inline int cxx_op_replaced(const char *name, const void *self, const void *malloc_obj) {
  void *f = dlsym(RTLD_DEFAULT, name);
  Dl_info at;
  return f != NULL && dladdr(f, &at) && at.dli_fbase != self && at.dli_fbase != malloc_obj;
}

/* reaches[i] = 1 for each variant whose default calls, maybe through other variants, an
 * operator the program replaced; `self_fn` is any function of the asking library.
 * dlsym may allocate: the recorder calls this under its guard. */
static inline void cxx_ops_reaching_replaced(const void *self_fn, unsigned char reaches[N_OPS]) {
  Dl_info self, mal;
  for (int i = 0; i < N_OPS; i++) reaches[i] = 0;
  void *m = dlsym(RTLD_DEFAULT, "malloc");
  if (!dladdr(self_fn, &self)) return;
  const void *malloc_obj = m != NULL && dladdr(m, &mal) ? mal.dli_fbase : self.dli_fbase;
  for (int i = 0; i < N_OPS; i++) {
    int c = cxx_op_default_calls[i];
    reaches[i] = c >= 0 && (reaches[c] || cxx_op_replaced(cxx_op_names[c], self.dli_fbase,
                                                          malloc_obj));
  }
}

#endif
