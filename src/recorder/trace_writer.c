/*
 * trace_writer.c — the trace's buffers, and the writer thread that writes full
 * ones as TRACE_EVENTS chunks (profile_format.h): raw by default, compressed
 * (zlib's raw deflate, Huffman coding only) with HEAPSCOPE_TRACE_COMPRESS=1.
 *
 * Compression is off by default because it costs more than everything else in
 * trace mode: about 75 MB/s, 2 s of the writer thread's CPU for the 25 M events
 * of the churn benchmark (1.5 s run), to save a quarter of the file (about 7
 * bytes an event raw, 5 compressed).
 *
 * TRACE_BUFFERS buffers are mapped once: a free list and a queue of full ones,
 * under one spinlock held for a few instructions. A producer that finds no free
 * buffer waits for the writer (back-pressure), so memory stays bounded and no
 * event is dropped. The writer thread polls the queue every millisecond; a
 * snapshot writes the queue itself (hs_trace_drain) and waits for the writer's
 * buffer in progress, so the file holds every event before the snapshot. From a
 * signal handler the drain writes raw (uncompressed) chunks.
 *
 * zlib gets its memory from mmap (zalloc below), never from the program's heap;
 * each of the two compressors (the writer thread's, the drain's) is set up once
 * and reset per buffer, and the writer thread keeps its chunk buffer: mapping them
 * per buffer cost 150 page faults a buffer.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "guard.h"
#include "recorder.h"
#include "trace.h"
#include "tracking.h"

#define OUT_BYTES ((TRACE_BUFFER_BYTES + TRACE_BUFFER_BYTES / 100 + 8191) & ~4095u)

static struct hs_trace_buf *free_list, *full_head, *full_tail;
static _Atomic int queue_lock;
static _Atomic int writer_busy;        /* the writer thread holds a buffer */
static _Atomic int writer_pid;         /* process the writer thread runs in */
static _Atomic int start_pid;          /* process whose file has its TRACE_START */
static uint8_t *writer_out, *drain_out;
static int deflate_on;                 /* HEAPSCOPE_TRACE_COMPRESS=1 */

/* A compressor and its output area; one for the writer thread, one for drains
 * (dumps are serialized; a signal handler's drain does not compress). */
struct packer {
    z_stream z;
    int ready;   /* 1: z set up; -1: setting it up failed (write raw) */
    uint8_t *out;
};
static struct packer writer_packer, drain_packer;
static struct hs_buf writer_chunk;     /* the writer thread's, kept between buffers */

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

/* ---- zlib on mmap ---- */

static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    size_t n = (size_t)items * size + 16;
    uint8_t *p = hs_map(n);
    if (!p)
        return Z_NULL;
    memcpy(p, &n, sizeof n);
    return p + 16;
}

static void z_free(voidpf opaque, voidpf address)
{
    (void)opaque;
    size_t n;
    uint8_t *p = (uint8_t *)address - 16;
    memcpy(&n, p, sizeof n);
    hs_unmap(p, n);
}

/* Compressed size in pk->out, or 0 if compression failed (then write raw). */
static size_t deflate_into(struct packer *pk, const uint8_t *in, size_t len)
{
    z_stream *z = &pk->z;
    if (pk->ready == 0) {
        memset(z, 0, sizeof *z);
        z->zalloc = z_alloc;
        z->zfree = z_free;
        /* Huffman coding only: the varints compress to ~3/4 at several times the
         * speed of LZ matching, which finds little in them */
        pk->ready = deflateInit2(z, 1, Z_DEFLATED, -15, 8, Z_HUFFMAN_ONLY) == Z_OK ? 1 : -1;
    } else if (pk->ready == 1 && deflateReset(z) != Z_OK) {
        deflateEnd(z);
        pk->ready = -1;
    }
    if (pk->ready != 1)
        return 0;
    z->next_in = (Bytef *)in;
    z->avail_in = (uInt)len;
    z->next_out = pk->out;
    z->avail_out = OUT_BYTES;
    return deflate(z, Z_FINISH) == Z_STREAM_END ? OUT_BYTES - z->avail_out : 0;
}

/* ---- chunks ---- */

/* pk: compress with it (NULL: raw); chunk: a buffer to build the chunk in, kept
 * (NULL: a fresh one, released after). */
static void write_buffer(struct hs_trace_buf *b, struct packer *pk, struct hs_buf *kept)
{
    struct hs_buf fresh = {0}, *chunk = kept ? kept : &fresh;
    chunk->len = 0;
    int me = (int)getpid();
    int was = atomic_load(&start_pid);
    if (was != me && atomic_compare_exchange_strong(&start_pid, &was, me)) {
        size_t c = hs_chunk_begin(chunk, HS_TRACE_START);
        hs_buf_u32(chunk, 1);
        hs_buf_u32(chunk, (uint32_t)(hs_track.temp_between > UINT32_MAX ? UINT32_MAX
                                                                        : hs_track.temp_between));
        hs_buf_u64(chunk, hs_track.temp_ns);
        hs_buf_u64(chunk, hs_start_mono_ns);
        hs_chunk_end(chunk, c);
    }
    size_t packed = pk ? deflate_into(pk, b->data, b->len) : 0;
    size_t c = hs_chunk_begin(chunk, HS_TRACE_EVENTS);
    hs_buf_u32(chunk, b->thread);
    hs_buf_u32(chunk, b->events);
    hs_buf_u64(chunk, b->first_seq);
    hs_buf_u64(chunk, b->last_seq);
    hs_buf_u32(chunk, packed ? 1 : 0);   /* codec: 0 raw, 1 zlib */
    hs_buf_u32(chunk, 0);
    hs_buf_u64(chunk, b->len);
    hs_buf_bytes(chunk, packed ? pk->out : b->data, packed ? packed : b->len);
    hs_chunk_end(chunk, c);
    hs_profile_write(chunk);
    if (!kept || chunk->failed)
        hs_buf_release(chunk);
}

/* ---- the queue ---- */

static void push_free(struct hs_trace_buf *b)
{
    lock_queue();
    b->next = free_list;
    free_list = b;
    unlock_queue();
}

/* The oldest full buffer, or NULL; busy: the writer thread takes it. */
static struct hs_trace_buf *pop_full(int busy)
{
    lock_queue();
    struct hs_trace_buf *b = full_head;
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
    hs_guard = 1;  /* whatever this thread allocates is not the program's */
    for (;;) {
        struct hs_trace_buf *b = hs_profile_is_open() ? pop_full(1) : NULL;
        if (!b) {
            sleep_us(1000);
            continue;
        }
        write_buffer(b, deflate_on ? &writer_packer : NULL, &writer_chunk);
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
    int saved_guard = hs_guard;
    hs_guard = 1;
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attr, writer_main, NULL) != 0) {
        hs_warn("cannot start the trace writer thread: the trace is written at snapshots");
    }
    pthread_attr_destroy(&attr);
    hs_guard = saved_guard;
}

struct hs_trace_buf *hs_trace_take_empty(void)
{
    for (;;) {
        lock_queue();
        struct hs_trace_buf *b = free_list;
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
        ensure_writer();
        sleep_us(50);   /* back-pressure: the writer frees one */
    }
}

void hs_trace_hand_over(struct hs_trace_buf *b)
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

void hs_trace_drain(int raw)
{
    struct hs_trace_buf *b;
    while ((b = pop_full(0))) {
        write_buffer(b, raw || !deflate_on ? NULL : &drain_packer, NULL);
        push_free(b);
    }
    for (int waited = 0; atomic_load(&writer_busy) && waited < 5000; waited++)
        sleep_us(1000);
}

void hs_trace_writer_reset(void)
{
    struct hs_trace_buf *pool = (struct hs_trace_buf *)(drain_out + OUT_BYTES);
    free_list = full_head = full_tail = NULL;
    for (unsigned i = 0; i < TRACE_BUFFERS; i++) {
        pool[i].next = free_list;
        free_list = &pool[i];
    }
    atomic_store(&queue_lock, 0);
    atomic_store(&writer_busy, 0);
    /* the parent's writer thread may have been using its chunk buffer and
     * compressor: the child's writer thread starts afresh (leaving their
     * mappings, the child's copies, alone) */
    memset(&writer_chunk, 0, sizeof writer_chunk);
    writer_packer.ready = 0;
    /* writer_pid and start_pid name the parent: the child starts its own */
}

int hs_trace_writer_init(void)
{
    size_t bytes = 2 * (size_t)OUT_BYTES + TRACE_BUFFERS * sizeof(struct hs_trace_buf);
    writer_out = hs_map(bytes);
    if (!writer_out)
        return -1;
    drain_out = writer_out + OUT_BYTES;
    writer_packer.out = writer_out;
    drain_packer.out = drain_out;
    const char *c = getenv("HEAPSCOPE_TRACE_COMPRESS");
    deflate_on = c && *c && strcmp(c, "0") != 0;
    /* the buffers after both output areas */
    struct hs_trace_buf *pool = (struct hs_trace_buf *)(drain_out + OUT_BYTES);
    for (unsigned i = 0; i < TRACE_BUFFERS; i++) {
        pool[i].next = free_list;
        free_list = &pool[i];
    }
    return 0;
}
