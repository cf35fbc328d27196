/*
 * writer.c — the trace's buffers, and the writer thread that writes full
 * ones as TRACE_EVENTS chunks (profile_format.h): zstd-compressed by default
 * (codec 2, level 1), raw with HEAPSCOPE_TRACE_COMPRESS=0.
 *
 * Measured on the churn benchmark (25 M events; CPU of the whole run, writer
 * thread included, against the run without heapscope): raw 2.2x at 6.9 bytes an
 * event, zstd level 1 2.8x at 4.0, level -1 2.7x at 4.6, level 2 3.2x at 4.0,
 * and the deflate (Huffman only) this file wrote before 4.3x at 5.1: zstd is both
 * smaller and faster, so deflate is only read (older files), never written.
 *
 * HSR_TRACE_BUFFERS buffers are mapped once: a free list and a queue of full ones,
 * under one spinlock held for a few instructions. A producer that finds no free
 * buffer waits for the writer (back-pressure), so memory stays bounded and no
 * event is dropped. The writer thread polls the queue every millisecond; a
 * snapshot writes the queue itself (hsr_trace_drain) and waits for the writer's
 * buffer in progress, so the file holds every event before the snapshot. From a
 * signal handler the drain writes raw (uncompressed) chunks.
 *
 * The writer thread never opens the profile again after the program closed it
 * (a daemon closing every descriptor, a launcher before exec): its open() could
 * take a number the program is about to dup2 onto (core/proc_files.c). It waits;
 * a producer that then finds no free buffer writes the oldest full one itself,
 * raw, from the program's thread, which may open the file again.
 *
 * zstd gets its memory from mmap (ZSTD_customMem below), never from the
 * program's heap; each of the two contexts (the writer thread's, the drain's) is
 * made once and reused for every buffer (zstd keeps its workspace), and the
 * writer thread keeps its chunk buffer: mapping them per buffer cost 150 page
 * faults a buffer.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCCtx_advanced: memory from mmap; exported by libzstd.so */
#include <zstd.h>

#include "core/guard.h"
#include "core/lifecycle.h"
#include "core/pool.h"
#include "core/proc_files.h"
#include "output/profile_writer.h"
#include "trace/buffers.h"
#include "track/tracking.h"

/* zstd's level: the fastest that still compresses well (see above) */

#define OUT_BYTES ((HSR_TRACE_BUFFER_BYTES + HSR_TRACE_BUFFER_BYTES / 100 + 8191) & ~4095u)
_Static_assert(OUT_BYTES >= ZSTD_COMPRESSBOUND(HSR_TRACE_BUFFER_BYTES), "a buffer's worst case");

static struct hsr_trace_buf *free_list, *full_head, *full_tail;
static _Atomic int queue_lock;
static _Atomic int writer_busy;  /* the writer thread holds a buffer */
static _Atomic int writer_waits; /* the program closed the profile: the writer thread waits */
static _Atomic int writer_pid;   /* process the writer thread runs in */
static _Atomic int start_pid;    /* process whose file has its TRACE_START */
static uint8_t *writer_out, *drain_out;
/* codecs of TRACE_EVENTS (profile_format.h); 1, deflate, is only read */
static int compress_on = 1; /* HEAPSCOPE_TRACE_COMPRESS is not 0 */

/* A compressor and its output area; one for the writer thread, one for drains
 * (dumps are serialized; a signal handler's drain does not compress). */
struct packer {
    ZSTD_CCtx *zc;
    int ready; /* 1: zc made; -1: making it failed (write raw) */
    uint8_t *out;
};
static struct packer writer_packer, drain_packer;
static struct hsr_buf writer_chunk; /* the writer thread's, kept between buffers */

static void lock_queue(void)
{
    while (atomic_exchange_explicit(&queue_lock, 1, memory_order_acquire))
        ;
}

static void unlock_queue(void) { atomic_store_explicit(&queue_lock, 0, memory_order_release); }

static void sleep_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* ---- zstd on mmap ---- */

/* The mapping's size is kept in its first 16 bytes (zstd wants 8-byte alignment). */
static void *zs_alloc(void *opaque, size_t size)
{
    (void)opaque;
    size_t n = size + 16;
    uint8_t *p = hsr_map(n);
    if (!p)
        return NULL;
    memcpy(p, &n, sizeof n);
    return p + 16;
}

static void zs_free(void *opaque, void *address)
{
    (void)opaque;
    if (!address)
        return;
    size_t n;
    uint8_t *p = (uint8_t *)address - 16;
    memcpy(&n, p, sizeof n);
    hsr_unmap(p, n);
}

/* Compressed size in pk->out, or 0 if compression failed or did not pay (then
 * write raw). ZSTD_compressCCtx keeps the context's workspace between calls of
 * the same parameters: after the first buffer it maps nothing. */
static size_t pack(struct packer *pk, const uint8_t *in, size_t len)
{
    if (pk->ready == 0) {
        ZSTD_customMem mem = {zs_alloc, zs_free, NULL};
        pk->zc = ZSTD_createCCtx_advanced(mem);
        pk->ready = pk->zc ? 1 : -1;
    }
    if (pk->ready != 1)
        return 0;
    size_t n = ZSTD_compressCCtx(pk->zc, pk->out, OUT_BYTES, in, len, HSR_TRACE_ZSTD_LEVEL);
    return ZSTD_isError(n) || n >= len ? 0 : n;
}

/* ---- chunks ---- */

/* pk: compress with it (NULL: raw); chunk: a buffer to build the chunk in, kept
 * (NULL: a fresh one, released after). hsr_profile_write's answer: 0, -1, or
 * HSR_PROFILE_DEFERRED (the writer thread met a file the program closed: nothing
 * written, the buffer is to be written again, TRACE_START with it). */
static int write_buffer(struct hsr_trace_buf *b, struct packer *pk, struct hsr_buf *kept)
{
    struct hsr_buf fresh = {0}, *chunk = kept ? kept : &fresh;
    chunk->len = 0;
    int me = (int)getpid();
    int was = atomic_load(&start_pid), starts = 0;
    if (was != me && atomic_compare_exchange_strong(&start_pid, &was, me)) {
        starts = 1;
        size_t c = hsr_chunk_begin(chunk, HS_TRACE_START);
        hsr_buf_u32(chunk, 1);
        hsr_buf_u32(
            chunk,
            (uint32_t)(hsr_track.temp_between > UINT32_MAX ? UINT32_MAX : hsr_track.temp_between));
        hsr_buf_u64(chunk, hsr_track.temp_ns);
        hsr_buf_u64(chunk, hsr_start_mono_ns);
        hsr_chunk_end(chunk, c);
    }
    size_t packed = pk ? pack(pk, b->data, b->len) : 0;
    size_t c = hsr_chunk_begin(chunk, HS_TRACE_EVENTS);
    hsr_buf_u32(chunk, b->thread);
    hsr_buf_u32(chunk, b->events);
    hsr_buf_u64(chunk, b->first_seq);
    hsr_buf_u64(chunk, b->last_seq);
    hsr_buf_u32(chunk, packed ? HS_CODEC_ZSTD : HS_CODEC_NONE);
    hsr_buf_u32(chunk, 0);
    hsr_buf_u64(chunk, b->len);
    hsr_buf_bytes(chunk, packed ? pk->out : b->data, packed ? packed : b->len);
    hsr_chunk_end(chunk, c);
    int rc = hsr_profile_write(chunk);
    if (rc == HSR_PROFILE_DEFERRED && starts)
        atomic_store(&start_pid, was);
    if (!kept || chunk->failed)
        hsr_buf_release(chunk);
    return rc;
}

/* ---- the queue ---- */

static void push_free(struct hsr_trace_buf *b)
{
    lock_queue();
    b->next = free_list;
    free_list = b;
    unlock_queue();
}

/* b back at the head of the queue: the oldest again (a deferred write). */
static void push_full_front(struct hsr_trace_buf *b)
{
    lock_queue();
    b->next = full_head;
    full_head = b;
    if (!full_tail)
        full_tail = b;
    unlock_queue();
}

/* The oldest full buffer, or NULL; busy: the writer thread takes it. */
static struct hsr_trace_buf *pop_full(int busy)
{
    lock_queue();
    struct hsr_trace_buf *b = full_head;
    if (b) {
        full_head = b->next;
        if (!full_head)
            full_tail = NULL;
        if (busy)
            atomic_store(&writer_busy, 1);
    }
    unlock_queue();
    return b;
}

static void *writer_main(void *arg)
{
    (void)arg;
    hsr_guard = 1; /* whatever this thread allocates is not the program's */
    hsr_helper_thread_start();
    hsr_own_thread_mark(); /* never opens a file the program closed */
    for (;;) {
        int is_open = hsr_profile_is_open(), writable = is_open && hsr_profile_writable_here();
        atomic_store(&writer_waits, is_open && !writable);
        struct hsr_trace_buf *b = writable ? pop_full(1) : NULL;
        if (!b) {
            hsr_helper_poll(); /* never keeps the process alive (core/last_thread.c) */
            sleep_us(1000);
            continue;
        }
        if (write_buffer(b, compress_on ? &writer_packer : NULL, &writer_chunk) ==
            HSR_PROFILE_DEFERRED) { /* closed since the test above: kept, the writer waits */
            push_full_front(b);
            atomic_store(&writer_waits, 1);
        } else
            push_free(b);
        atomic_store(&writer_busy, 0);
    }
    return NULL;
}

static void ensure_writer(void)
{
    int me = (int)getpid();
    int was = atomic_load(&writer_pid);
    if (was == me || !atomic_compare_exchange_strong(&writer_pid, &was, me))
        return;
    int saved_guard = hsr_guard;
    hsr_guard = 1;
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* signals go to the program's threads */
    if (pthread_create(&thread, &attr, writer_main, NULL) != 0) {
        hsr_warn("cannot start the trace writer thread: the trace is written at snapshots");
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    hsr_guard = saved_guard;
}

struct hsr_trace_buf *hsr_trace_take_empty(void)
{
    for (;;) {
        lock_queue();
        struct hsr_trace_buf *b = free_list;
        if (b)
            free_list = b->next;
        unlock_queue();
        if (b) {
            b->next = NULL;
            b->events = 0;
            b->len = 0;
            b->first_seq = b->last_seq = 0;
            b->prev_seq = b->prev_ns = b->prev_addr = 0;
            return b;
        }
        struct hsr_trace_buf *full = atomic_load(&writer_waits) ? pop_full(0) : NULL;
        if (full) { /* the writer thread waits for a profile the program closed */
            (void)write_buffer(full, NULL, NULL);
            push_free(full);
            continue;
        }
        ensure_writer();
        sleep_us(50); /* back-pressure: the writer frees one */
    }
}

void hsr_trace_hand_over(struct hsr_trace_buf *b)
{
    b->next = NULL;
    lock_queue();
    if (full_tail)
        full_tail->next = b;
    else
        full_head = b;
    full_tail = b;
    unlock_queue();
    ensure_writer();
}

void hsr_trace_drain(int raw)
{
    struct hsr_trace_buf *b;
    while ((b = pop_full(0))) {
        (void)write_buffer(b, raw || !compress_on ? NULL : &drain_packer, NULL);
        push_free(b);
    }
    for (int waited = 0; atomic_load(&writer_busy) && waited < 5000; waited++)
        sleep_us(1000);
}

void hsr_trace_writer_reset(void)
{
    struct hsr_trace_buf *pool = (struct hsr_trace_buf *)(drain_out + OUT_BYTES);
    free_list = full_head = full_tail = NULL;
    for (unsigned i = 0; i < HSR_TRACE_BUFFERS; i++) {
        pool[i].next = free_list;
        free_list = &pool[i];
    }
    atomic_store(&queue_lock, 0);
    atomic_store(&writer_busy, 0);
    atomic_store(&writer_waits, 0);
    /* the parent's writer thread may have been using its chunk buffer and
     * compressor: the child's writer thread starts afresh (leaving their
     * mappings, the child's copies, alone) */
    memset(&writer_chunk, 0, sizeof writer_chunk);
    writer_packer.ready = 0;
    writer_packer.zc = NULL;
    /* writer_pid and start_pid name the parent: the child starts its own */
}

int hsr_trace_writer_init(void)
{
    size_t bytes = 2 * (size_t)OUT_BYTES + HSR_TRACE_BUFFERS * sizeof(struct hsr_trace_buf);
    writer_out = hsr_map(bytes);
    if (!writer_out)
        return -1;
    drain_out = writer_out + OUT_BYTES;
    writer_packer.out = writer_out;
    drain_packer.out = drain_out;
    const char *c = getenv("HEAPSCOPE_TRACE_COMPRESS");
    compress_on = !(c && strcmp(c, "0") == 0);
    /* the buffers after both output areas */
    struct hsr_trace_buf *pool = (struct hsr_trace_buf *)(drain_out + OUT_BYTES);
    for (unsigned i = 0; i < HSR_TRACE_BUFFERS; i++) {
        pool[i].next = free_list;
        free_list = &pool[i];
    }
    return 0;
}
