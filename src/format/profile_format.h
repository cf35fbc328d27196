/*
 * heapscope profile file format, version 1.
 *
 * The format is described once, in two files side by side:
 *   - this header: the grammar in prose (file header, chunk framing, reading rules)
 *     and what each chunk type means;
 *   - profile_format.table: every constant and every payload layout (field order,
 *     types, repeated groups), machine-readable. The build generates
 *     profile_format_table.h (the HS_* #defines and enums, included below) from it,
 *     and the Python reader (python/heapscope/profile/) reads it at import.
 * tests/format/ checks that the C constants, the Python ones and the chunk list
 * below agree. To change the format: edit the table (and this prose), bump
 * FORMAT_VERSION when old readers cannot read the result.
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
 *   - A reader skips chunk types it does not know (forward compatibility), and the
 *     bytes of a payload after the fields it knows (a later version may append some).
 *   - A reader starts at header_size, not at 32: a later version may lengthen the header.
 *   - A chunk whose header or payload runs past end-of-file marks the end of the
 *     readable file (the process died while writing); everything before it stands.
 *   - A crc32 mismatch, a bad magic or an unknown major version is corruption:
 *     the reader rejects the file with one clear line.
 *   - The data of a file is grouped in snapshots. Each dump (exit,
 *     heapscope_dump(), a signal, exec) appends one complete snapshot:
 *       SNAPSHOT_BEGIN, MODULES, REGIONS, SIZE_COUNTS, API_COUNTS, STACK_TYPES...,
 *       [TRACK_SUMMARY, TRACK_TYPES...], SNAPSHOT_END
 *     Counts in a snapshot are cumulative since process start (or since the last
 *     heapscope_reset()), so the reader uses the LAST snapshot that has its END.
 *     A snapshot cut short is reported as such and the previous complete one used.
 *   - Chunks "in stream" (event trace, timeline) are written outside snapshots as the
 *     run goes; a reader takes them from the whole file, in file order.
 *
 * Chunk types (layouts: profile_format.table; the C names are in parentheses when
 * they are not HS_CHUNK_<name>):
 *
 *    id  name              where     what
 *     1  PROCESS           file      who ran: pid, MPI rank, host, executable, command line
 *     2  SETTINGS          file      how this run was recorded (stack selection, unwinder)
 *     3  SNAPSHOT_BEGIN    snapshot  opens a snapshot: its seq, reason, time
 *     4  MODULES           snapshot  the loaded objects at dump time (dl_iterate_phdr)
 *     5  REGIONS           snapshot  the region tree
 *     6  SIZE_COUNTS       snapshot  allocations per exact requested size, per region
 *     7  API_COUNTS        snapshot  calls per API function, per region
 *     8  STACK_TYPES       snapshot  stack trace types of the selected sizes and regions
 *     9  SNAPSHOT_END      snapshot  closes it: lost stacks, threads
 *    10  TRACK_SUMMARY     snapshot  record --track: temporaries' bounds, heap peak (HS_TRACK_SUMMARY)
 *    11  TRACK_TYPES       snapshot  record --track: lifetimes per stack type or size (HS_TRACK_TYPES)
 *    12  TRACE_START       stream    record --trace: once per file (HS_TRACE_START)
 *    13  TRACE_EVENTS      stream    record --trace: one buffer of one thread's events (HS_TRACE_EVENTS)
 *    20  TIMELINE          stream    a batch of heap/RSS/PSS samples (HS_TIMELINE_SAMPLES)
 *    21  TIMELINE_REGIONS  stream    regions the samples refer to (HS_TIMELINE_REGIONS)
 *    30  ENDING            snapshot  a crash's signal or MPI_Abort's code (HS_ENDING)
 *    40  JOB               file      job file: ranks, hosts, the reduction's cost (HS_JOB)
 *    41  JOB_REGIONS       file      job file: the region paths the counts refer to (HS_JOB_REGIONS)
 *    42  JOB_SIZE_COUNTS   file      job file: allocations per region and size, all ranks (HS_JOB_SIZE_COUNTS)
 *    43  JOB_API_COUNTS    file      job file: calls per region and API, all ranks (HS_JOB_API_COUNTS)
 *    44  JOB_RANKS         file      job file: one fixed row per rank (HS_JOB_RANKS)
 *    45  JOB_HOSTS         file      job file: per host its ranks, RSS/PSS sum and max (HS_JOB_HOSTS)
 *
 * Every reader must know 1..9 (enum hs_chunk_type); the others (enums
 * hs_track_chunk_type, hs_timeline_chunk_type) belong to optional modes, and a reader
 * that does not know them skips them. Ids 14..19 and 22..29 are free for those
 * families; 30 and above for new ones.
 *
 * What the chunks mean, beyond their fields' comments in the table:
 *
 *   PROCESS is written once, right after the header; SETTINGS once, after it.
 *
 *   MODULES: runtime address = file vaddr + bias; ranges are the runtime [lo, hi)
 *   of the object's executable PT_LOADs.
 *
 *   REGIONS: region 0 is always present: the implicit top level, name "" (shown as
 *   "(none)"), parent_id NO_PARENT. A nested region's parent is the region that was
 *   innermost when it began; the same name under different parents is a different
 *   region id. Allocations count for the innermost region.
 *
 *   SIZE_COUNTS: requested size: malloc(n) -> n, calloc(a,b) -> a*b, realloc(p,n) -> n,
 *   reallocarray(p,a,b) -> a*b, posix_memalign/aligned_alloc/memalign(al, n) -> n,
 *   valloc(n) -> n, pvalloc(n) -> n (before the page rounding),
 *   operator new(n) / new[](n) (all variants) -> n. C++ operators are interposed
 *   too (peer allocators such as tcmalloc define their own); the malloc that
 *   libstdc++'s operator new makes inside is not counted a second time.
 *   Every call that asks for a block is counted, successful or not; bytes are
 *   size * count. realloc(p, 0) with p != NULL is a free, not an allocation.
 *
 *   API_COUNTS: free(NULL) and delete of NULL are not counted; failed calls (NULL
 *   returned) are counted in HS_API_FAILED as well as under their own function.
 *
 *   STACK_TYPES: a type is a distinct (region, exact size, frame sequence). Frame 0 is
 *   the return address into the code that called the allocation function (e.g.
 *   operator new in libstdc++), frame depth-1 the outermost captured. All frames
 *   are return addresses: symbolize at address - 1. Recorder frames are removed.
 *   Several STACK_TYPES chunks may appear in one snapshot; the reader adds them.
 *
 *   SNAPSHOT_END: lost_stacks counts the allocations in the selected sizes and regions
 *   whose stack could not be stored (table full).
 *
 *   Tracking, record --track (HEAPSCOPE_TRACK=1): TRACK_SUMMARY and TRACK_TYPES come
 *   inside a snapshot, after STACK_TYPES; cumulative since process start, like the
 *   counts. Sizes are requested sizes; "live" means allocated and not yet freed. A
 *   temporary is freed with at most temporary_max_between other allocations of the
 *   allocating thread in between, and lives at most temporary_max_ns (0 = no time
 *   bound). untracked blocks (the side table, of max_blocks entries
 *   (HEAPSCOPE_TRACK_MAX_BLOCKS), was full) are never in the figures.
 *   TRACK_TYPES has a row per stack trace type (the sizes and regions whose stacks are
 *   recorded) or, for every other block, per (region, size) (depth 0): several chunks
 *   may appear, rows add up by key (region, size, frames); the same type seen by two
 *   threads is two rows. time_bins and between_bins are the nonzero bins, lowest
 *   first, of the lifetime histograms of the freed blocks, in ns and in allocations
 *   of the allocating thread in between; bin 0 holds value 0, bin b >= 1 values in
 *   [2^(b-1), 2^b) (b capped at 63). frames as STACK_TYPES.
 *
 *   Event trace, record --trace (HEAPSCOPE_TRACE=1): written outside snapshots as the
 *   run goes (a writer thread, bounded buffers) and before every snapshot, so the
 *   file holds every event up to its last snapshot. TRACE_START comes once per file,
 *   before or among the first TRACE_EVENTS; its temporary bounds are
 *   HEAPSCOPE_TEMP_BETWEEN / HEAPSCOPE_TEMP_NS, for the reports replayed from it;
 *   event times minus start_mono_ns are times since start.
 *   TRACE_EVENTS: thread is the count table index (a thread started after another
 *   ended may continue its stream). codec (enum hs_trace_codec): NONE, data is the
 *   events; DEFLATE, raw deflate, no zlib header (Python's zlib.decompress(data, -15)),
 *   written by older recorders, still read; ZSTD, one zstd frame whose content size
 *   (= raw_len) is in its header (Python: zstandard.ZstdDecompressor().decompress),
 *   the default. A chunk that would not get smaller, or that a signal handler's
 *   snapshot writes, is NONE.
 *       Every alloc and free takes a number from one process-wide sequence (an
 *       alloc after the allocator returned, a free before the block is released);
 *       a thread's events are in increasing order, chunks of one thread too; merge
 *       the threads' streams by number to replay the process. Numbers of reallocs
 *       that failed are skipped. Events (varint = LEB128, zigzag for signed;
 *       seq, ns and addr are deltas from the previous event of the same chunk,
 *       from 0 for its first):
 *       Each event begins with varint head = dseq << 2 | tag (enum hs_trace_event):
 *         ALLOC: head | varint dns (CLOCK_MONOTONIC) | zigzag daddr
 *                | varint size | varint stack_id (0: no stack) | varint region
 *                | varint extra (usable minus requested size)
 *         FREE:  head | varint dns | zigzag daddr
 *         STACK: head (dseq 0: the byte 3) | varint id | varint region | varint size
 *                | varint depth | depth x u64 return_address  (defines id; comes
 *                before its first use, in the same thread's stream)
 *       A free of an address not allocated in the trace (a block from before the
 *       recorder started) is to be ignored. realloc: the old block's free, then
 *       the new block's alloc (also when it stays in place).
 *
 *   Timeline: TIMELINE and TIMELINE_REGIONS are written outside snapshots, as the run
 *   goes: the recorder's sampler thread appends them every flush period (1 s), when
 *   its sample buffer fills, and before every snapshot; so a process killed by SIGKILL
 *   leaves its samples up to the last flush even with no snapshot at all.
 *   TIMELINE: interval_ns is the periodic sampling interval; caliper_ns the MPI
 *   caliper rate limit (at most one measured call per period; 0 = every call; -1 =
 *   off). heap_measure (enum hs_heap_measure): usable bytes (malloc_usable_size),
 *   requested bytes, or not measured (the heap fields are -1). The totals
 *   (calipers_taken: outermost MPI calls measured; calipers_skipped: not measured,
 *   the rate limit; mpi_rss_delta / mpi_pss_delta: sum over measured calls of the
 *   RSS/PSS growth during the call minus the heap growth during it, the MPI library's
 *   non-heap memory; samples_lost: buffer full or write refused) are since process
 *   start as of this chunk (the last chunk has the run's). Per sample: kind (enum
 *   hs_sample_kind); heap_component_bytes: of the heap, blocks allocated inside MPI
 *   calls ("[MPI]" regions); -1 = not measured (boundary samples read RSS only, from
 *   statm). Samples of several threads: sort by mono_ns. Region: for a region
 *   boundary the region that begins or ends; otherwise the process-wide region current
 *   at the sample (MPI samples: the calling thread's region, outside "[MPI]").
 *   TIMELINE_REGIONS: the regions defined since the previous one, in the layout of
 *   REGIONS and with the same ids; written before the TIMELINE chunk that first
 *   refers to them.
 *
 *   Ending: a snapshot whose reason is CRASH (written by the recorder's handler of
 *   SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT, before the signal's default action or
 *   the program's own handler) or MPI_ABORT (written by the MPI layer's MPI_Abort)
 *   holds one ENDING chunk before SNAPSHOT_END: kind (the same reason), the signal,
 *   its si_code (> 0: a fault; <= 0: sent by kill, raise or abort), MPI_Abort's error
 *   code, the fault address (si_addr; 0 for SIGABRT and for signals sent). Later
 *   snapshots of a process that is ending so (the _exit MPI_Abort ends with, the
 *   SIGTERM of the launcher) keep that reason and chunk.
 *
 *   The job file (heapscope.<job>.job.hsj, hs_job_chunk_type): another kind of file
 *   with the same header and framing, written once by an MPI job's rank 0 at
 *   MPI_Finalize from every rank's summary reduced inside the job (the MPI layer,
 *   src/mpi/mpi_job.c; the writer, src/recorder/output/job_file.c). It holds no
 *   snapshot: JOB, JOB_REGIONS, JOB_SIZE_COUNTS..., JOB_API_COUNTS..., JOB_RANKS...,
 *   JOB_HOSTS, in that order. Region ids of the counts index JOB_REGIONS (paths, not
 *   trees: the ranks' region ids differ). A rank's figures are those of its snapshot
 *   at MPI_Finalize; its heap/RSS/PSS peaks are the maxima of the timeline samples its
 *   file had received by then. Readers of profiles skip job files by name.
 */
#ifndef HEAPSCOPE_PROFILE_FORMAT_H
#define HEAPSCOPE_PROFILE_FORMAT_H

/* HS_MAGIC, HS_FORMAT_VERSION, HS_HEADER_SIZE, HS_CHUNK_HEADER_SIZE, HS_NO_PARENT,
 * HS_NO_LABEL; enum hs_chunk_type (HS_CHUNK_*), hs_track_chunk_type (HS_TRACK_*,
 * HS_TRACE_*), hs_timeline_chunk_type (HS_TIMELINE_*), hs_snapshot_reason
 * (HS_REASON_*), hs_api (HS_API_*), hs_unwinder, hs_sample_kind (HS_SAMPLE_*),
 * hs_heap_measure, hs_trace_codec (HS_CODEC_*), hs_trace_event (HS_EVENT_*),
 * hs_ending_chunk_type (HS_ENDING). */
#include "profile_format_table.h"

#endif
