/*
 * hooks.h — the next definitions of the interposed functions (malloc.c): the
 * allocator underneath, found with dlsym(RTLD_NEXT) on first use.
 */
#ifndef HSR_HOOKS_H
#define HSR_HOOKS_H

#include "common.h"

struct hsr_real {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);        /* NULL: use posix_memalign */
    void *(*memalign)(size_t, size_t);             /* NULL: use posix_memalign */
    void *(*valloc)(size_t);                       /* NULL: use posix_memalign */
    void *(*pvalloc)(size_t);                      /* NULL: use posix_memalign */
    void *(*reallocarray)(void *, size_t, size_t); /* NULL: use realloc */
};
extern HSR_HIDDEN struct hsr_real hsr_real;
HSR_HIDDEN void hsr_resolve(void);
/* dlsym(RTLD_NEXT, name), guarded; NULL if there is no next definition */
HSR_HIDDEN void *hsr_next(const char *name);

#endif
