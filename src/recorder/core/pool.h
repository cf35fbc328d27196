/*
 * pool.h — the recorder's own memory, straight from mmap (pool.c): never the
 * program's allocator, which the hooks interpose.
 */
#ifndef HSR_POOL_H
#define HSR_POOL_H

#include "common.h"

HSR_HIDDEN void *hsr_map(size_t bytes); /* zeroed; NULL on failure */
HSR_HIDDEN void hsr_unmap(void *p, size_t bytes);
HSR_HIDDEN void *hsr_remap(void *p, size_t old_bytes, size_t new_bytes); /* NULL on failure */
HSR_HIDDEN void *hsr_pool_alloc(size_t bytes); /* small, permanent, zeroed */
HSR_HIDDEN char *hsr_pool_strdup(const char *s);
HSR_HIDDEN void hsr_pool_lock(void); /* fork */
HSR_HIDDEN void hsr_pool_unlock(void);

struct hsr_arena_chunk;
struct hsr_arena {
    struct hsr_arena_chunk *head;
}; /* scratch memory of one dump */
HSR_HIDDEN void *hsr_arena_alloc(struct hsr_arena *a, size_t bytes); /* zeroed */
HSR_HIDDEN void hsr_arena_free(struct hsr_arena *a);

#endif
