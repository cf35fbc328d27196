/* Generated from profile_format.table by gen_profile_format.py: do not edit.
 * Included by profile_format.h (the prose); the table holds every layout. */
#ifndef HEAPSCOPE_PROFILE_FORMAT_TABLE_H
#define HEAPSCOPE_PROFILE_FORMAT_TABLE_H

#define HS_MAGIC "HEAPSCPE"
#define HS_FORMAT_VERSION 2u
#define HS_HEADER_SIZE 48u
#define HS_CHUNK_HEADER_SIZE 24u
#define HS_OLDEST_VERSION 1u
#define HS_HEADER_SIZE_V1 32u
#define HS_CHUNK_HEADER_SIZE_V1 16u
#define HS_HEADER_WRITE_FAILED 1u
#define HS_NO_PARENT 0xFFFFFFFFu
#define HS_NO_LABEL 0xFFFFFFFFu

enum hs_chunk_type {
    /* PROCESS (file): u32 pid | u32 ppid | i32 rank | u32 reserved | u64 start_real_ns |
     *     str host | str exe | str cmdline | str job_id | str recorder_version */
    HS_CHUNK_PROCESS = 1,
    /* SETTINGS (file): str stack_sizes | str stack_regions | u32 max_depth | u32 unwinder */
    HS_CHUNK_SETTINGS = 2,
    /* SNAPSHOT_BEGIN (snapshot): u32 seq | u32 reason | u64 mono_ns */
    HS_CHUNK_SNAPSHOT_BEGIN = 3,
    /* MODULES (snapshot): u32 count | count x { u64 bias | u32 nranges | u32 build_id_len |
     *     bytes build_id[build_id_len] | str path | nranges x { u64 lo | u64 hi } } */
    HS_CHUNK_MODULES = 4,
    /* REGIONS (snapshot): u32 count | count x { u32 id | u32 parent_id | str name } */
    HS_CHUNK_REGIONS = 5,
    /* SIZE_COUNTS (snapshot): u32 count | count x { u32 region | u32 reserved | u64 size |
     *     u64 count } */
    HS_CHUNK_SIZE_COUNTS = 6,
    /* API_COUNTS (snapshot): u32 count | count x { u32 region | u32 api | u64 calls } */
    HS_CHUNK_API_COUNTS = 7,
    /* STACK_TYPES (snapshot): u32 count | count x { u32 region | u32 depth | u64 size |
     *     u64 count | u64 bytes | u64 frames[depth] } */
    HS_CHUNK_STACK_TYPES = 8,
    /* SNAPSHOT_END (snapshot): u32 seq | u32 types_crc | u64 lost_stacks | u64 total_threads */
    HS_CHUNK_SNAPSHOT_END = 9,
};

enum hs_track_chunk_type {
    /* TRACK_SUMMARY (snapshot): u32 temporary_max_between | u32 reserved |
     *     u64 temporary_max_ns | u64 peak_bytes | u64 peak_mono_ns | u64 end_bytes |
     *     u64 untracked | u64 table_bytes | u64 max_blocks */
    HS_TRACK_SUMMARY = 10,
    /* TRACK_TYPES (snapshot): u32 count | count x { u32 region | u32 depth | u64 size |
     *     u64 allocs | u64 frees | u64 temporaries | u64 live_at_peak | u64 live_at_end |
     *     u64 extra_bytes | u64 time_mask | u64 between_mask |
     *     u64 time_bins[popcount(time_mask)] | u64 between_bins[popcount(between_mask)] |
     *     u64 frames[depth] } */
    HS_TRACK_TYPES = 11,
    /* TRACE_START (stream): u32 version | u32 temporary_max_between | u64 temporary_max_ns |
     *     u64 start_mono_ns */
    HS_TRACE_START = 12,
    /* TRACE_EVENTS (stream): u32 thread | u32 events | u64 first_seq | u64 last_seq |
     *     u32 codec | u32 reserved | u64 raw_len | bytes data[rest] */
    HS_TRACE_EVENTS = 13,
};

enum hs_timeline_chunk_type {
    /* TIMELINE (stream): u64 interval_ns | i64 caliper_ns | u32 heap_measure | u32 reserved |
     *     u64 calipers_taken | u64 calipers_skipped | i64 mpi_rss_delta | i64 mpi_pss_delta |
     *     u64 samples_lost | u32 nlabels | str labels[nlabels] | u32 count | u32 reserved |
     *     count x { u64 mono_ns | u32 kind | u32 region | u32 label | u32 reserved |
     *     i64 heap_bytes | i64 heap_component_bytes | i64 rss_bytes | i64 pss_bytes } */
    HS_TIMELINE_SAMPLES = 20,
    /* TIMELINE_REGIONS (stream): u32 count | count x { u32 id | u32 parent_id | str name } */
    HS_TIMELINE_REGIONS = 21,
};

enum hs_failed_chunk_type {
    /* FAILED_ALLOCS (snapshot): u32 count | count x { u32 region | u32 api | u64 size |
     *     u64 calls | u32 size_known | u32 reserved } */
    HS_FAILED_ALLOCS = 40,
};

enum hs_snapshot_reason {
    HS_REASON_EXIT = 0,   /* "exit" */
    HS_REASON_API = 1,   /* "api" */
    HS_REASON_SIGTERM = 2,   /* "sigterm" */
    HS_REASON_SIGINT = 3,   /* "sigint" */
    HS_REASON_SIGUSR1 = 4,   /* "sigusr1" */
    HS_REASON_EXEC = 5,   /* "exec" */
    HS_REASON_PERIODIC = 6,   /* "periodic" */
};

enum hs_api {
    HS_API_MALLOC = 0,   /* "malloc" */
    HS_API_CALLOC = 1,   /* "calloc" */
    HS_API_REALLOC = 2,   /* "realloc" */
    HS_API_REALLOCARRAY = 3,   /* "reallocarray" */
    HS_API_POSIX_MEMALIGN = 4,   /* "posix_memalign" */
    HS_API_ALIGNED_ALLOC = 5,   /* "aligned_alloc" */
    HS_API_MEMALIGN = 6,   /* "memalign" */
    HS_API_VALLOC = 7,   /* "valloc" */
    HS_API_PVALLOC = 8,   /* "pvalloc" */
    HS_API_FREE = 9,   /* "free" */
    HS_API_FAILED = 10,   /* "failed" */
    HS_API_OPERATOR_NEW = 11,   /* "operator_new" */
    HS_API_OPERATOR_DELETE = 12,   /* "operator_delete" */
    HS_API_COUNT = 13,
};

enum hs_unwinder {
    HS_UNWINDER_DWARF = 0,   /* "dwarf" */
    HS_UNWINDER_FRAME_POINTERS = 1,   /* "frame-pointers" */
};

enum hs_sample_kind {
    HS_SAMPLE_PERIODIC = 0,   /* "periodic" */
    HS_SAMPLE_REGION_BEGIN = 1,   /* "region-begin" */
    HS_SAMPLE_REGION_END = 2,   /* "region-end" */
    HS_SAMPLE_MPI_BEFORE = 3,   /* "mpi-before" */
    HS_SAMPLE_MPI_AFTER = 4,   /* "mpi-after" */
    HS_SAMPLE_FINAL = 5,   /* "final" */
};

enum hs_heap_measure {
    HS_HEAP_MEASURE_USABLE = 0,   /* "usable" */
    HS_HEAP_MEASURE_REQUESTED = 1,   /* "requested" */
    HS_HEAP_MEASURE_NONE = 2,   /* "none" */
};

enum hs_trace_codec {
    HS_CODEC_NONE = 0,   /* "none" */
    HS_CODEC_DEFLATE = 1,   /* "deflate" */
    HS_CODEC_ZSTD = 2,   /* "zstd" */
};

enum hs_trace_event {
    HS_EVENT_ALLOC = 1,   /* "alloc" */
    HS_EVENT_FREE = 2,   /* "free" */
    HS_EVENT_STACK = 3,   /* "stack" */
};

#endif
