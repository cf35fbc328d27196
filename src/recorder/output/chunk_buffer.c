/*
 * chunk_buffer.c — chunks built in growable buffers of the recorder's own memory
 * (hsr_map/hsr_remap: no malloc, so a signal handler may build them too), framed as
 * profile_format.h says; profile_writer.c appends whole buffers to the file.
 */
#include <string.h>
#include <zlib.h>

#include "core/pool.h"
#include "output/profile_writer.h"

/* ---- growable byte buffer (hsr_map/hsr_remap) ---- */

static void reserve(struct hsr_buf *b, size_t more)
{
    if (b->failed || b->len + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->len + more)
        cap *= 2;
    void *p = hsr_remap(b->p, b->cap, cap); /* the recorder's memory (pool.c) */
    if (!p) {
        b->failed = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

void hsr_buf_bytes(struct hsr_buf *b, const void *p, size_t n)
{
    reserve(b, n);
    if (b->failed || n == 0)
        return;
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void hsr_buf_u32(struct hsr_buf *b, uint32_t v) { hsr_buf_bytes(b, &v, 4); } /* x86-64: LE */
void hsr_buf_u64(struct hsr_buf *b, uint64_t v) { hsr_buf_bytes(b, &v, 8); }

void hsr_buf_str(struct hsr_buf *b, const char *s, size_t n)
{
    hsr_buf_u32(b, (uint32_t)n);
    hsr_buf_bytes(b, s, n);
}

void hsr_buf_release(struct hsr_buf *b)
{
    if (b->p)
        hsr_unmap(b->p, b->cap);
    memset(b, 0, sizeof *b);
}

/* ---- chunks ---- */

size_t hsr_count_slot(struct hsr_buf *b)
{
    size_t at = b->len;
    hsr_buf_u32(b, 0);
    return at;
}

void hsr_count_fill(struct hsr_buf *b, size_t at, uint32_t n)
{
    if (!b->failed)
        memcpy(b->p + at, &n, 4);
}

/* Closes the chunk being filled (its count filled in). */
static void rows_close(struct hsr_buf *b, struct hsr_rows *r)
{
    hsr_count_fill(b, r->count_at, r->n);
    hsr_chunk_end(b, r->chunk);
    r->n = 0;
}

void hsr_rows_next(struct hsr_buf *b, struct hsr_rows *r)
{
    if (r->n == r->per_chunk)
        rows_close(b, r);
    if (r->n == 0) {
        r->chunk = hsr_chunk_begin(b, r->type);
        r->count_at = hsr_count_slot(b);
    }
    r->n++;
}

void hsr_rows_done(struct hsr_buf *b, struct hsr_rows *r)
{
    if (r->n)
        rows_close(b, r);
}

size_t hsr_chunk_begin(struct hsr_buf *b, uint32_t type)
{
    size_t start = b->len;
    hsr_buf_u32(b, type);
    hsr_buf_u32(b, 0); /* crc, filled by hsr_chunk_end */
    hsr_buf_u64(b, 0); /* payload length */
    hsr_buf_u32(b, 0); /* head_crc */
    hsr_buf_u32(b, 0); /* reserved */
    return start;
}

void hsr_chunk_end(struct hsr_buf *b, size_t start)
{
    if (b->failed)
        return;
    hsr_chunk_seal(b->p + start, b->len - start - HS_CHUNK_HEADER_SIZE);
}

void hsr_chunk_seal(uint8_t *head, uint64_t len)
{
    memcpy(head + 8, &len, 8);
    /* zlib's: about 10x the speed of a byte-wise table, which cost 0.5 s of
     * trace mode's writer thread on the churn benchmark (170 MB of events) */
    uLong crc = crc32_z(0, head, 4); /* type */
    crc = crc32_z(crc, head + 8, 8); /* payload_len */
    crc = crc32_z(crc, head + HS_CHUNK_HEADER_SIZE, len);
    uint32_t c = (uint32_t)crc;
    memcpy(head + 4, &c, 4);
    uint32_t head_crc = (uint32_t)crc32_z(0, head, 16);
    memcpy(head + 16, &head_crc, 4);
}
