/*
 * regions.c — the regions (phases) allocations are counted for.
 *
 * Ids: a region is interned by (parent id, name); id 0 is the implicit top level.
 * The registry is append-only: an entry is filled, then the count is published
 * (release), so a dump reads it without the lock — even from a signal handler.
 *
 * Current region of an allocation: the thread's own override when it has one
 * (heapscope_thread_region_begin), else the innermost region of the process-wide
 * stack, which heapscope_region_begin/end push and pop (a mutex, taken only
 * there: regions change rarely). The hot path reads one relaxed global.
 * Process-wide boundaries are timeline samples (timeline/timeline.c), taken after the lock
 * is released. Thread-local regions are not: the timeline is the process's.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "count/regions.h"
#include "count/selection.h"
#include "count/thread.h"
#include "timeline/timeline.h"
#include "track/track.h"

static struct hsr_region regions[HSR_MAX_REGIONS] = {{HS_NO_PARENT, 0, ""}};
static _Atomic uint32_t region_count = 1;
uint8_t hsr_region_stacks[HSR_MAX_REGIONS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* (parent, name) -> id + 1, open addressing; guarded by `lock` */
#define INDEX_SIZE (2 * HSR_MAX_REGIONS)
static uint32_t index_slots[INDEX_SIZE];
static uint32_t overflow_id; /* 0 until the registry is full */

_Atomic uint32_t hsr_process_region;
static uint32_t process_stack[HSR_MAX_REGION_DEPTH];
static uint32_t process_depth, process_beyond; /* beyond: begins past max depth */

HSR_TLS union hsr_place hsr_place;
static HSR_TLS uint32_t thread_stack[HSR_MAX_REGION_DEPTH];
static HSR_TLS uint32_t thread_depth, thread_beyond;

static _Atomic uint64_t unbalanced;

uint32_t hsr_region_count(void)
{
    return atomic_load_explicit(&region_count, memory_order_acquire);
}

const struct hsr_region *hsr_region_get(uint32_t id) { return &regions[id]; }

uint64_t hsr_regions_unbalanced(void)
{
    return atomic_load_explicit(&unbalanced, memory_order_relaxed);
}

static uint32_t hash_key(uint32_t parent, const char *name)
{
    uint32_t h = 2166136261u ^ parent;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

/* "a/b/c" for region id; "(none)" for 0. */
static void region_path(uint32_t id, char *out, size_t len)
{
    if (id == 0) {
        strncpy(out, "(none)", len);
        return;
    }
    const char *parts[HSR_MAX_REGION_DEPTH + 2];
    int n = 0;
    for (uint32_t r = id; r != 0 && n < (int)(sizeof parts / sizeof *parts); r = regions[r].parent)
        parts[n++] = regions[r].name;
    size_t used = 0;
    out[0] = 0;
    for (int i = n - 1; i >= 0; i--) {
        size_t l = strlen(parts[i]);
        if (used + l + 2 >= len)
            break;
        if (used)
            out[used++] = '/';
        memcpy(out + used, parts[i], l);
        used += l;
        out[used] = 0;
    }
}

static void select_region(uint32_t id)
{
    char path[4096];
    region_path(id, path, sizeof path);
    uint8_t sel = (uint8_t)hsr_region_name_selected(id ? regions[id].name : "(none)", path);
    regions[id].stack_selected = sel;
    hsr_region_stacks[id] = sel;
}

void hsr_regions_reselect(void)
{
    pthread_mutex_lock(&lock);
    for (uint32_t id = 0; id < hsr_region_count(); id++)
        select_region(id);
    pthread_mutex_unlock(&lock);
}

static uint32_t append(uint32_t parent, const char *name)
{
    uint32_t id = atomic_load_explicit(&region_count, memory_order_relaxed);
    const char *copy = hsr_pool_strdup(name);
    if (!copy)
        copy = "(out of memory)";
    regions[id].parent = parent;
    regions[id].name = copy;
    select_region(id);
    atomic_store_explicit(&region_count, id + 1, memory_order_release);
    return id;
}

/* Called with `lock` held. */
static uint32_t intern(uint32_t parent, const char *name)
{
    uint32_t h = hash_key(parent, name) % INDEX_SIZE;
    for (;; h = (h + 1) % INDEX_SIZE) {
        uint32_t slot = index_slots[h];
        if (!slot)
            break;
        const struct hsr_region *r = &regions[slot - 1];
        if (r->parent == parent && strcmp(r->name, name) == 0)
            return slot - 1;
    }
    if (overflow_id)
        return overflow_id;
    if (hsr_region_count() == HSR_MAX_REGIONS - 1) {
        overflow_id = append(0, "(overflow)");
        hsr_warn("more than 4095 distinct regions: further new regions count as \"(overflow)\"");
        return overflow_id;
    }
    uint32_t id = append(parent, name);
    index_slots[h] = id + 1;
    return id;
}

/* Names may not contain '/' (the path separator): it becomes '_'. */
static void clean_name(const char *name, char *out, size_t len)
{
    if (!name)
        name = "(null)";
    size_t i = 0;
    for (; name[i] && i + 1 < len; i++)
        out[i] = name[i] == '/' ? '_' : name[i];
    out[i] = 0;
}

/* Tracking: the thread's deferred frees processed, so that the boundary's
 * timeline sample has its heap exact (track/deferred.c). */
static void settle_frees(void)
{
    struct hsr_thread *t = hsr_self;
    if (!hsr_track_on || !t)
        return;
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    hsr_track_flush(t);
    hsr_guard = saved_guard;
}

void hsr_regions_begin(const char *name, int thread_only)
{
    char clean[1024];
    clean_name(name, clean, sizeof clean);
    uint32_t began = HS_NO_PARENT;
    uint32_t thread_parent = hsr_thread_parent_region();
    pthread_mutex_lock(&lock);
    if (thread_only) {
        uint32_t id = intern(thread_parent, clean);
        if (thread_depth < HSR_MAX_REGION_DEPTH) {
            thread_stack[thread_depth++] = id;
            hsr_place.in.region = id + 1;
        } else {
            thread_beyond++;
        }
    } else {
        uint32_t top = process_depth ? process_stack[process_depth - 1] : 0;
        uint32_t id = intern(top, clean);
        if (process_depth < HSR_MAX_REGION_DEPTH) {
            process_stack[process_depth++] = id;
            atomic_store_explicit(&hsr_process_region, id, memory_order_relaxed);
            began = id;
        } else {
            process_beyond++;
        }
    }
    pthread_mutex_unlock(&lock);
    if (began != HS_NO_PARENT) {
        settle_frees();
        hsr_timeline_region(HS_SAMPLE_REGION_BEGIN, began);
    }
}

void hsr_regions_end(int thread_only)
{
    if (thread_only) {
        if (thread_beyond)
            thread_beyond--;
        else if (thread_depth) {
            thread_depth--;
            hsr_place.in.region = thread_depth ? thread_stack[thread_depth - 1] + 1 : 0;
        } else
            atomic_fetch_add(&unbalanced, 1);
        return;
    }
    uint32_t ended = HS_NO_PARENT;
    pthread_mutex_lock(&lock);
    if (process_beyond)
        process_beyond--;
    else if (process_depth) {
        ended = process_stack[--process_depth];
        uint32_t top = process_depth ? process_stack[process_depth - 1] : 0;
        atomic_store_explicit(&hsr_process_region, top, memory_order_relaxed);
    } else
        atomic_fetch_add(&unbalanced, 1);
    pthread_mutex_unlock(&lock);
    if (ended != HS_NO_PARENT) {
        settle_frees();
        hsr_timeline_region(HS_SAMPLE_REGION_END, ended);
    }
}

uint32_t hsr_region_intern(uint32_t parent, const char *name)
{
    pthread_mutex_lock(&lock);
    uint32_t id = intern(parent, name);
    pthread_mutex_unlock(&lock);
    return id;
}

void hsr_regions_lock(void) { pthread_mutex_lock(&lock); }
void hsr_regions_unlock(void) { pthread_mutex_unlock(&lock); }
