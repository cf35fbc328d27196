/*
 * heapscope profile file format, version 1.
 *
 * This header is the single source of truth for the on-disk format. The C writer
 * (profile_writer.c) includes it; the Python reader (python/heapscope/profile/)
 * mirrors the constants and says so. Change both together and bump the version.
 *
 * All integers are little-endian. The file is a fixed header followed by chunks.
 *
 *   file    := header chunk*
 *
 *   header  (32 bytes)
 *   +--------------------+------------+----------------+-------------------+----------+
 *   | magic "HEAPSCPE"   | u32 version| u32 header_size| u64 start_real_ns | u64 zero |
 *   |      8 bytes       |    (= 1)   |     (= 32)     | CLOCK_REALTIME    | reserved |
 *   +--------------------+------------+----------------+-------------------+----------+
 *
 *   chunk   := u32 type | u32 crc32(payload) | u64 payload_len | payload
 *              (crc32 is the zlib/IEEE 802.3 polynomial, as Python's zlib.crc32)
 *
 *   str     := u32 byte_length | bytes        (UTF-8 or raw bytes, no NUL)
 *
 * Reading rules:
 *   - A reader skips chunk types it does not know (forward compatibility).
 *   - A chunk whose header or payload runs past end-of-file marks the end of the
 *     readable file (the process died while writing); everything before it stands.
 *   - A crc32 mismatch, a bad magic or an unknown major version is corruption:
 *     the reader rejects the file with one clear line.
 *   - The data of a file is grouped in snapshots. Each dump (exit,
 *     heapscope_dump(), a signal, exec) appends one complete snapshot:
 *       SNAPSHOT_BEGIN, MODULES, REGIONS, SIZE_COUNTS, API_COUNTS, STACK_TYPES...,
 *       SNAPSHOT_END
 *     Counts in a snapshot are cumulative since process start (or since the last
 *     heapscope_reset()), so the reader uses the LAST snapshot that has its END.
 *     A snapshot cut short is reported as such and the previous complete one used.
 *
 * Chunk types and payloads:
 *
 *   1 PROCESS        written once, right after the header
 *       u32 pid | u32 ppid | i32 rank (-1 when not under MPI) | u32 reserved
 *       u64 start_real_ns
 *       str host | str exe (realpath of /proc/self/exe) | str cmdline (argv joined by
 *       NUL bytes) | str job_id ("" if none) | str recorder_version
 *
 *   2 SETTINGS       written once, after PROCESS: how this run was recorded
 *       str stack_sizes  (spec as given: "12,24,100-200", "all" or "")
 *       str stack_regions (comma list of region names, "" = all regions)
 *       u32 max_depth | u32 unwinder (0 = dwarf/libunwind, 1 = frame pointers)
 *
 *   3 SNAPSHOT_BEGIN
 *       u32 seq (0, 1, 2 ...) | u32 reason (HS_REASON_*) | u64 mono_ns since start
 *
 *   4 MODULES        the loaded objects at dump time (dl_iterate_phdr)
 *       u32 count, then per module:
 *         u64 bias (load address: file vaddr + bias = runtime address)
 *         u32 nranges | u32 build_id_len | build_id bytes
 *         str path (absolute; the main executable's real path)
 *         nranges x { u64 lo | u64 hi }  runtime [lo, hi) of executable PT_LOADs
 *
 *   5 REGIONS
 *       u32 count, then per region: u32 id | u32 parent_id | str name
 *       Region 0 is always present: the implicit top level, name "" (shown as
 *       "(none)"), parent_id 0xFFFFFFFF. A nested region's parent is the region
 *       that was innermost when it began; the same name under different parents
 *       is a different region id. Allocations count for the innermost region.
 *
 *   6 SIZE_COUNTS    allocations per exact requested size, per region
 *       u32 count, then per row: u32 region | u32 reserved | u64 size | u64 count
 *       Requested size: malloc(n) -> n, calloc(a,b) -> a*b, realloc(p,n) -> n,
 *       reallocarray(p,a,b) -> a*b, posix_memalign/aligned_alloc/memalign(al, n) -> n,
 *       valloc(n) -> n, pvalloc(n) -> n (before the page rounding),
 *       operator new(n) / new[](n) (all variants) -> n. C++ operators are interposed
 *       too (peer allocators such as tcmalloc define their own); the malloc that
 *       libstdc++'s operator new makes inside is not counted a second time.
 *       Every call that asks for a block is counted, successful or not; bytes are
 *       size * count. realloc(p, 0) with p != NULL is a free, not an allocation.
 *
 *   7 API_COUNTS     calls per API function, per region
 *       u32 count, then per row: u32 region | u32 api (HS_API_*) | u64 calls
 *       free(NULL) and delete of NULL are not counted; failed calls (NULL returned) are counted in
 *       HS_API_FAILED as well as under their own function.
 *
 *   8 STACK_TYPES    stack trace types of the selected sizes and regions
 *       u32 count, then per type:
 *         u32 region | u32 depth | u64 size | u64 count | u64 bytes
 *         depth x u64 return_address
 *       A type is a distinct (region, exact size, frame sequence). Frame 0 is the
 *       return address into the code that called the allocation function (e.g.
 *       operator new in libstdc++), frame depth-1 the outermost captured. All frames
 *       are return addresses: symbolize at address - 1. Recorder frames are removed.
 *       Several STACK_TYPES chunks may appear in one snapshot; the reader adds them.
 *
 *   9 SNAPSHOT_END
 *       u32 seq | u32 reserved | u64 lost_stacks (allocations in the selected sizes
 *       and regions whose stack could not be stored: table full) | u64 total_threads
 *
 * Chunk types 10 and above are reserved for later issues (tracking, timeline,
 * MPI attribution); readers that do not know them skip them.
 *
 * Tracking (types 10..19), record --track (HEAPSCOPE_TRACK=1). Inside a snapshot,
 * after STACK_TYPES; cumulative since process start, like the counts. Sizes are
 * requested sizes; "live" means allocated and not yet freed.
 *
 *  10 TRACK_SUMMARY
 *       u32 temporary_max_between (N: a temporary is freed with at most N other
 *       allocations of the allocating thread in between) | u32 reserved
 *       u64 temporary_max_ns (and lives at most this long; 0 = no time bound)
 *       u64 peak_bytes (maximum of the requested bytes live in tracked blocks)
 *       u64 peak_mono_ns (when the peak was reached, ns since process start)
 *       u64 end_bytes (requested bytes live at this snapshot)
 *       u64 untracked (blocks not tracked: the side table was full; never in the
 *       figures) | u64 table_bytes (memory the recorder mapped for tracking)
 *       u64 max_blocks (the side table's bound, HEAPSCOPE_TRACK_MAX_BLOCKS)
 *
 *  11 TRACK_TYPES    what happened to the blocks of each stack trace type (the
 *       sizes and regions whose stacks are recorded) or, for every other block, of
 *       each (region, size): several chunks may appear, rows add up by key
 *       (region, size, frames); the same type seen by two threads is two rows.
 *       u32 count, then per row:
 *         u32 region | u32 depth (0: a per-size row) | u64 size
 *         u64 allocs | u64 frees | u64 temporaries
 *         u64 live_at_peak (blocks live at the peak of TRACK_SUMMARY)
 *         u64 live_at_end (blocks live at this snapshot: at exit, the leaks)
 *         u64 extra_bytes (usable size minus requested size, summed over allocs)
 *         u64 time_mask | u64 between_mask
 *         popcount(time_mask) x u64, popcount(between_mask) x u64: the nonzero bins,
 *         lowest first, of the lifetime histograms of the freed blocks, in ns and
 *         in allocations of the allocating thread in between; bin 0 holds value 0,
 *         bin b >= 1 values in [2^(b-1), 2^b) (b capped at 63)
 *         depth x u64 return_address (as STACK_TYPES)
 *
 * Event trace, record --trace (HEAPSCOPE_TRACE=1). Written OUTSIDE snapshots as
 * the run goes (a writer thread, bounded buffers) and before every snapshot, so
 * the file holds every event up to its last snapshot.
 *
 *  12 TRACE_START    once per file, before or among the first TRACE_EVENTS
 *       u32 version (= 1) | u32 temporary_max_between | u64 temporary_max_ns
 *       (HEAPSCOPE_TEMP_BETWEEN / HEAPSCOPE_TEMP_NS, for the reports replayed from it)
 *       u64 start_mono_ns (CLOCK_MONOTONIC at process start: event times minus
 *       this are times since start)
 *
 *  13 TRACE_EVENTS   one buffer of one thread's events
 *       u32 thread (count table index: a thread started after another ended may
 *       continue its stream) | u32 events | u64 first_seq | u64 last_seq
 *       u32 codec | u32 reserved | u64 raw_len (bytes of events) | data
 *       codec: 0 = none (data is the events);
 *              1 = raw deflate, RFC 1951, no zlib header (Python's
 *                  zlib.decompress(data, -15)): written by older recorders, still read;
 *              2 = one zstd frame, RFC 8878, its content size in its header (= raw_len)
 *                  (Python: zstandard.ZstdDecompressor().decompress(data)); the
 *                  default. A chunk that would not get smaller, or that a signal
 *                  handler's snapshot writes, is codec 0.
 *       Every alloc and free takes a number from one process-wide sequence (an
 *       alloc after the allocator returned, a free before the block is released);
 *       a thread's events are in increasing order, chunks of one thread too; merge
 *       the threads' streams by number to replay the process. Numbers of reallocs
 *       that failed are skipped. Events (varint = LEB128, zigzag for signed;
 *       seq, ns and addr are deltas from the previous event of the same chunk,
 *       from 0 for its first):
 *       Each event begins with varint head = dseq << 2 | tag:
 *         1 alloc: head | varint dns (CLOCK_MONOTONIC) | zigzag daddr
 *                  | varint size | varint stack_id (0: no stack) | varint region
 *                  | varint extra (usable minus requested size)
 *         2 free:  head | varint dns | zigzag daddr
 *         3 stack: head (dseq 0: the byte 3) | varint id | varint region | varint size | varint depth
 *                  | depth x u64 return_address  (defines id; comes before its
 *                  first use, in the same thread's stream)
 *       A free of an address not allocated in the trace (a block from before the
 *       recorder started) is to be ignored. realloc: the old block's free, then
 *       the new block's alloc (also when it stays in place).
 *
 * Timeline (types 20..29). Written OUTSIDE snapshots, as the run goes: the
 * recorder's sampler thread appends them every flush period (1 s), when its
 * sample buffer fills, and before every snapshot; so a process killed by SIGKILL
 * leaves its samples up to the last flush even with no snapshot at all. A reader
 * takes every TIMELINE chunk of the file, in file order.
 *
 *  20 TIMELINE       a batch of samples
 *       u64 interval_ns (periodic sampling interval) | i64 caliper_ns (MPI caliper
 *       rate limit: at most one measured call per period; 0 = every call; -1 = off)
 *       u32 heap_measure (0 = usable bytes, malloc_usable_size; 1 = requested bytes;
 *       2 = not measured: the heap fields are -1)
 *       u32 reserved
 *       totals since process start, as of this chunk (the last chunk has the run's):
 *       u64 calipers_taken (outermost MPI calls measured) | u64 calipers_skipped
 *       (outermost MPI calls not measured: the rate limit) | i64 mpi_rss_delta |
 *       i64 mpi_pss_delta (sum over measured calls of the RSS/PSS growth during the
 *       call minus the heap growth during the call: the MPI library's non-heap
 *       memory) | u64 samples_lost (samples dropped: buffer full or write refused)
 *       u32 nlabels, then nlabels x str label (MPI function names of this batch)
 *       u32 count | u32 reserved, then per sample (56 bytes):
 *         u64 mono_ns (since process start) | u32 kind (HS_SAMPLE_*) | u32 region
 *         u32 label (index into this chunk's labels, 0xFFFFFFFF = none) | u32 reserved
 *         i64 heap_bytes (heap in use) | i64 heap_component_bytes (of it, blocks
 *         allocated inside MPI calls: "[MPI]" regions) | i64 rss_bytes | i64 pss_bytes
 *         (-1 = not measured: boundary samples read RSS only, from statm)
 *       Samples of several threads: sort by mono_ns. Region: for a region boundary
 *       the region that begins or ends; otherwise the process-wide region current at
 *       the sample (MPI samples: the calling thread's region, outside "[MPI]").
 *
 *  21 TIMELINE_REGIONS  regions defined since the previous one (layout of REGIONS:
 *       u32 count, then u32 id | u32 parent_id | str name); written before the
 *       TIMELINE chunk that first refers to them. Same ids as the snapshots' REGIONS.
 */
#ifndef HEAPSCOPE_PROFILE_FORMAT_H
#define HEAPSCOPE_PROFILE_FORMAT_H

#define HS_MAGIC "HEAPSCPE"
#define HS_FORMAT_VERSION 1u
#define HS_HEADER_SIZE 32u
#define HS_CHUNK_HEADER_SIZE 16u
#define HS_NO_PARENT 0xFFFFFFFFu

enum hs_chunk_type {
    HS_CHUNK_PROCESS = 1,
    HS_CHUNK_SETTINGS = 2,
    HS_CHUNK_SNAPSHOT_BEGIN = 3,
    HS_CHUNK_MODULES = 4,
    HS_CHUNK_REGIONS = 5,
    HS_CHUNK_SIZE_COUNTS = 6,
    HS_CHUNK_API_COUNTS = 7,
    HS_CHUNK_STACK_TYPES = 8,
    HS_CHUNK_SNAPSHOT_END = 9,
};

/* Tracking and trace chunk types (10..19), see above. */
enum hs_track_chunk_type {
    HS_TRACK_SUMMARY = 10,
    HS_TRACK_TYPES = 11,
    HS_TRACE_START = 12,
    HS_TRACE_EVENTS = 13,
};

/* Timeline chunk types (20..29), see above. Named HS_TIMELINE_* rather than
 * HS_CHUNK_* : the core chunk set (1..9) is what every reader must know. */
enum hs_timeline_chunk_type {
    HS_TIMELINE_SAMPLES = 20,
    HS_TIMELINE_REGIONS = 21,
};

enum hs_sample_kind {
    HS_SAMPLE_PERIODIC = 0,      /* the sampler thread, every interval */
    HS_SAMPLE_REGION_BEGIN = 1,  /* heapscope_region_begin (process-wide regions) */
    HS_SAMPLE_REGION_END = 2,
    HS_SAMPLE_MPI_BEFORE = 3,    /* caliper: just before an outermost MPI call */
    HS_SAMPLE_MPI_AFTER = 4,     /* caliper: just after it */
    HS_SAMPLE_FINAL = 5,         /* at every snapshot (exit, dump, signal, exec) */
};

enum hs_snapshot_reason {
    HS_REASON_EXIT = 0,      /* atexit / library destructor */
    HS_REASON_API = 1,       /* heapscope_dump() or dump_size_profiling() */
    HS_REASON_SIGTERM = 2,
    HS_REASON_SIGINT = 3,
    HS_REASON_SIGUSR1 = 4,
    HS_REASON_EXEC = 5,      /* just before a successful-looking exec*() */
    HS_REASON_PERIODIC = 6,
};

enum hs_api {
    HS_API_MALLOC = 0,
    HS_API_CALLOC = 1,
    HS_API_REALLOC = 2,
    HS_API_REALLOCARRAY = 3,
    HS_API_POSIX_MEMALIGN = 4,
    HS_API_ALIGNED_ALLOC = 5,
    HS_API_MEMALIGN = 6,
    HS_API_VALLOC = 7,
    HS_API_PVALLOC = 8,
    HS_API_FREE = 9,
    HS_API_FAILED = 10,
    HS_API_OPERATOR_NEW = 11,    /* every C++ operator new / new[] variant */
    HS_API_OPERATOR_DELETE = 12, /* every C++ operator delete / delete[] variant */
    HS_API_COUNT = 13,
};

#endif
