/*
 * profile_writer.h — the profile file (profile_writer.c): its opening, appends of
 * whole buffers; chunk encoding into mmap'd buffers (chunk_buffer.c). The format itself is
 * src/format/profile_format.h.
 */
#ifndef HSR_PROFILE_WRITER_H
#define HSR_PROFILE_WRITER_H

#include "common.h"

struct hsr_buf {
    uint8_t *p;
    size_t len, cap;
    int failed;
};
HSR_HIDDEN void hsr_buf_u32(struct hsr_buf *b, uint32_t v);
HSR_HIDDEN void hsr_buf_u64(struct hsr_buf *b, uint64_t v);
HSR_HIDDEN void hsr_buf_bytes(struct hsr_buf *b, const void *p, size_t n);
HSR_HIDDEN void hsr_buf_str(struct hsr_buf *b, const char *s, size_t n);
HSR_HIDDEN void hsr_header_append(struct hsr_buf *b); /* the file header, crc sealed */
HSR_HIDDEN size_t hsr_chunk_begin(struct hsr_buf *b, uint32_t type);
HSR_HIDDEN void hsr_chunk_end(struct hsr_buf *b, size_t start);
/* A chunk's header filled in for a payload of len bytes after it: crc over type,
 * payload_len and payload, then head_crc over the first 16 bytes (profile_format.h,
 * chunk framing). */
HSR_HIDDEN void hsr_chunk_seal(uint8_t *head, uint64_t len);
HSR_HIDDEN void hsr_buf_release(struct hsr_buf *b);
/* A row count written before its rows: a u32 placeholder (hsr_count_slot returns where)
 * filled in once the rows are written (hsr_count_fill). */
HSR_HIDDEN size_t hsr_count_slot(struct hsr_buf *b);
HSR_HIDDEN void hsr_count_fill(struct hsr_buf *b, size_t at, uint32_t n);
/* Rows of one chunk type split into chunks of at most per_chunk rows, each chunk
 * starting with its row count: hsr_rows_next before a row, hsr_rows_done after the
 * last. Zero-initialize all but type and per_chunk. */
struct hsr_rows {
    uint32_t type, per_chunk, n;
    size_t chunk, count_at;
};
HSR_HIDDEN void hsr_rows_next(struct hsr_buf *b, struct hsr_rows *r);
HSR_HIDDEN void hsr_rows_done(struct hsr_buf *b, struct hsr_rows *r);
HSR_HIDDEN int hsr_profile_open(void); /* open a new file, write header/PROCESS/SETTINGS */
HSR_HIDDEN void hsr_profile_unwinder(uint32_t unwinder); /* SETTINGS rewritten in place */
/* Append a buffer of whole chunks: 0, or -1 (a failure is said once and marked in the
 * file, see profile_writer.c). A stream write leaves room for the next snapshot; a
 * snapshot's write may take the last of it, and fills in its SNAPSHOT_END's
 * types_crc (the buffer's last chunk). */
HSR_HIDDEN int hsr_profile_write(struct hsr_buf *b);
/* hsr_profile_write's answer in a thread of the recorder's own when the program has
 * closed the file (a descriptor it may be about to reuse): nothing written, nothing
 * said lost; the caller keeps its data for a write from one of the program's threads,
 * which opens the file again. */
#define HSR_PROFILE_DEFERRED (-2)
HSR_HIDDEN int hsr_profile_write_snapshot(struct hsr_buf *b);
/* Data that will not reach the file (err: an errno; what: "a snapshot"): said once,
 * marked in the header. */
HSR_HIDDEN void hsr_profile_lost(int err, const char *what);
HSR_HIDDEN void hsr_profile_close(void); /* a fork child: the parent's file left as it is */
HSR_HIDDEN int hsr_profile_is_open(void);
HSR_HIDDEN const char *hsr_profile_path(void);
HSR_HIDDEN int hsr_profile_pid(void);  /* the process the open file belongs to */
HSR_HIDDEN int hsr_profile_rank(void); /* its MPI rank, -1 if none */
/* Concurrent writers: see the top of profile_writer.c. A background thread (one of
 * the recorder's own: the timeline sampler) marks itself; hsr_profile_seal(), called
 * when the process is about to end, waits for the write in progress and refuses
 * background writes for a few seconds, so no write is cut by the process's end. */
HSR_HIDDEN void hsr_profile_background(void);
HSR_HIDDEN void hsr_profile_foreground(void);
/* 0 in a thread of ours (core/proc_files.h) once the program closed our file: only
 * the program's threads open it again (check_fd), so ours keep what they have. */
HSR_HIDDEN int hsr_profile_writable_here(void);
HSR_HIDDEN void hsr_profile_seal(void);
HSR_HIDDEN int hsr_profile_sealed(void);
HSR_HIDDEN void hsr_profile_after_fork_child(void);

#endif
