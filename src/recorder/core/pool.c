/*
 * pool.c — the recorder's own memory. Everything comes from mmap, never from the
 * program's allocator (which we are interposing, and which may be jemalloc,
 * tcmalloc ...). Three kinds:
 *   hsr_map/hsr_unmap    page-granular blocks (tables that are created once and grow);
 *                        hsr_remap grows one (mremap). Each is listed with the
 *                        timeline (own_memory.c): the recorder's memory is measured
 *                        apart from the program's
 *   hsr_pool_alloc      small permanent objects (region names), bump-allocated
 *   hsr_arena_*         scratch memory of one dump, freed whole at its end
 * All are async-signal-safe except hsr_pool_alloc (a spinlock; never used by dumps).
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/pool.h"
#include "timeline/own_memory.h"

static size_t page_round(size_t n)
{
    size_t page = 4096;
    return (n + page - 1) & ~(page - 1);
}

void *hsr_map(size_t bytes)
{
    void *p = mmap(NULL, page_round(bytes), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    hsr_own_add(p, page_round(bytes)); /* measured apart from the program's memory */
    return p;
}

void hsr_unmap(void *p, size_t bytes)
{
    if (p) {
        hsr_own_remove(p, page_round(bytes));
        munmap(p, page_round(bytes));
    }
}

void *hsr_remap(void *p, size_t old_bytes, size_t new_bytes)
{
    if (!p)
        return hsr_map(new_bytes);
    void *q = mremap(p, page_round(old_bytes), page_round(new_bytes), MREMAP_MAYMOVE);
    if (q == MAP_FAILED)
        return NULL;
    hsr_own_remove(p, page_round(old_bytes));
    hsr_own_add(q, page_round(new_bytes));
    return q;
}

/* ---- permanent small objects ---- */

static atomic_flag pool_lock = ATOMIC_FLAG_INIT;
static char *pool_cur;
static size_t pool_left;

void *hsr_pool_alloc(size_t bytes)
{
    bytes = (bytes + 15) & ~(size_t)15;
    if (bytes > HSR_POOL_BLOCK / 4)
        return hsr_map(bytes);
    while (atomic_flag_test_and_set_explicit(&pool_lock, memory_order_acquire))
        ;
    if (bytes > pool_left) {
        char *block = hsr_map(HSR_POOL_BLOCK);
        if (!block) {
            atomic_flag_clear_explicit(&pool_lock, memory_order_release);
            return NULL;
        }
        pool_cur = block;
        pool_left = HSR_POOL_BLOCK;
    }
    void *p = pool_cur;
    pool_cur += bytes;
    pool_left -= bytes;
    atomic_flag_clear_explicit(&pool_lock, memory_order_release);
    return p;
}

/* fork: the child must not inherit the lock held by a thread that does not exist
 * there (taken in the prepare handler, after the regions lock: same order). */
void hsr_pool_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&pool_lock, memory_order_acquire))
        ;
}

void hsr_pool_unlock(void) { atomic_flag_clear_explicit(&pool_lock, memory_order_release); }

char *hsr_pool_strdup(const char *s)
{
    size_t n = strlen(s);
    char *p = hsr_pool_alloc(n + 1);
    if (p)
        memcpy(p, s, n + 1);
    return p;
}

/* ---- dump scratch arenas ---- */

struct hsr_arena_chunk {
    struct hsr_arena_chunk *next;
    size_t size, used;
};

void *hsr_arena_alloc(struct hsr_arena *a, size_t bytes)
{
    bytes = (bytes + 15) & ~(size_t)15;
    struct hsr_arena_chunk *c = a->head;
    size_t header = (sizeof *c + 15) & ~(size_t)15;
    if (!c || c->size - c->used < bytes) {
        size_t size = page_round(header + (bytes > HSR_ARENA_CHUNK ? bytes : HSR_ARENA_CHUNK));
        c = hsr_map(size);
        if (!c)
            return NULL;
        c->size = size;
        c->used = header;
        c->next = a->head;
        a->head = c;
    }
    void *p = (char *)c + c->used;
    c->used += bytes;
    return p; /* fresh mmap pages are zero and chunks are never reused */
}

void hsr_arena_free(struct hsr_arena *a)
{
    while (a->head) {
        struct hsr_arena_chunk *next = a->head->next;
        hsr_unmap(a->head, a->head->size);
        a->head = next;
    }
}
