/*
 * heapscope profile file format, version 2 (version 1 files are still read).
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
 *   header  (48 bytes)
 *   +------------------+-------------+-----------------+-------------------+
 *   | magic "HEAPSCPE" | u32 version | u32 header_size | u64 start_real_ns |
 *   |     8 bytes      |    (= 2)    |      (= 48)     | CLOCK_REALTIME    |
 *   +------------------+-------------+-----------------+-------------------+
 *   | u32 flags        | u32 write_errno | u64 lost_at | u32 header_crc | u32 reserved (0) |
 *   +------------------+-----------------+-------------+----------------+------------------+
 *     header_crc = crc32 of the 40 bytes before it (a header that does not match is
 *     corrupt: the file is rejected).
 *
 *   chunk   := u32 type | u32 crc | u64 payload_len | u32 head_crc | u32 reserved (0)
 *              | payload
 *     crc      = crc32 of type (u32), payload_len (u64) and the payload, in that order;
 *     head_crc = crc32 of the chunk's first 16 bytes (type, crc, payload_len).
 *     (crc32 is the zlib/IEEE 802.3 polynomial, as Python's zlib.crc32; chained:
 *     zlib.crc32(payload, zlib.crc32(pack("<IQ", type, payload_len)))).
 *
 *   Version 1 (still read): a 32-byte header whose last 8 bytes are reserved (no
 *   flags), and chunk := u32 type | u32 crc32(payload) | u64 payload_len | payload:
 *   its crc covers neither the type nor the length, so a changed type byte went
 *   unseen, and a damaged length could only look like a file cut short.
 *
 *   str     := u32 byte_length | bytes        (UTF-8 or raw bytes, no NUL)
 *
 * Reading rules:
 *   - A reader skips chunk types it does not know (forward compatibility), and the
 *     bytes of a payload after the fields it knows (a later version may append some).
 *   - A reader starts at header_size, not at 32: a later version may lengthen the header.
 *   - A chunk whose header or payload runs past end-of-file marks the end of the
 *     readable file (the process died while writing); everything before it stands.
 *     (Version 2: the header's head_crc is checked first, so a damaged length is
 *     corruption, not a cut.)
 *   - A chunk whose head_crc or crc does not match (or whose reserved word is not 0)
 *     is corrupt: the reader says "corrupt chunk at byte N (type T)" and reads the
 *     chunks before it, as for a cut (the file flagged as incomplete); with no
 *     complete snapshot before it, the file is rejected with that line. A bad magic
 *     or a version this reader does not know rejects the file with one line.
 *   - A payload whose layout ends with counted rows or values (SIZE_COUNTS,
 *     MODULES, TIMELINE ...) must end with its last row: a count that disagrees with
 *     the payload is a malformed chunk (an error), never rows silently dropped. A
 *     layout that ends with fixed fields may be followed by more bytes (a later
 *     version may append fields), which a reader skips. An enum value a reader does
 *     not know where it must know it (an API id of API_COUNTS or FAILED_ALLOCS) is a
 *     malformed chunk too.
 *   - header.flags bit HEADER_WRITE_FAILED: the recorder could not write some of its
 *     data (a full disk, a quota, an I/O error, out of memory building a chunk). It
 *     says so on stderr when it happens, cuts a chunk written in part back to the
 *     last whole one, and rewrites flags, write_errno (the errno, 0 unknown),
 *     lost_at (the file's size when the first failed write began) and header_crc in
 *     place; the file
 *     goes on with the chunks it could write. Readers flag the file as incomplete. A
 *     file shorter than its header is incomplete too (an empty one: not even the
 *     header could be written).
 *   - A snapshot lacking MODULES, REGIONS, SIZE_COUNTS or API_COUNTS (every recorder
 *     writes one of each) is malformed, and so is a version 2 file without PROCESS
 *     and SETTINGS (a version 1 file without SETTINGS is read with its settings
 *     unknown, flagged as incomplete).
 *   - The data of a file is grouped in snapshots. Each dump (exit,
 *     heapscope_dump(), a signal, exec) appends one complete snapshot:
 *       SNAPSHOT_BEGIN, MODULES, REGIONS, SIZE_COUNTS, API_COUNTS, [FAILED_ALLOCS...],
 *       STACK_TYPES..., [TRACK_SUMMARY, TRACK_TYPES...], SNAPSHOT_END
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
 *    14  TRACK_UNTRACKED   snapshot  record --track: blocks left out of tracking, and their bytes (HS_TRACK_UNTRACKED)
 *    20  TIMELINE          stream    a batch of heap/RSS/PSS samples (HS_TIMELINE_SAMPLES)
 *    21  TIMELINE_REGIONS  stream    regions the samples refer to (HS_TIMELINE_REGIONS)
 *    22  HEAP_PEAK         stream    exact heap peaks so far, with each TIMELINE (HS_TIMELINE_HEAP_PEAK)
 *    30  ENDING            snapshot  a crash's signal or MPI_Abort's code (HS_ENDING)
 *    31  SAMPLING          file      record --sample-bytes: stacks are samples, mean bytes apart
 *    32  FAILED_ALLOCS     snapshot  allocation calls that failed, per API and size (HS_FAILED_ALLOCS)
 *    33  PROCESS_END       snapshot  how the process ended: which exit and its status (HS_PROCESS_END)
 *    40  JOB               file      job file: ranks, hosts, the reduction's cost (HS_JOB)
 *    41  JOB_REGIONS       file      job file: the region paths the counts refer to (HS_JOB_REGIONS)
 *    42  JOB_SIZE_COUNTS   file      job file: allocations per region and size, all ranks (HS_JOB_SIZE_COUNTS)
 *    43  JOB_API_COUNTS    file      job file: calls per region and API, all ranks (HS_JOB_API_COUNTS)
 *    44  JOB_RANKS         file      job file: one fixed row per rank (HS_JOB_RANKS)
 *    45  JOB_HOSTS         file      job file: per host its ranks, RSS/PSS sum and max (HS_JOB_HOSTS)
 *    46  JOB_PEAK_STACKS   file      job file: stack types at the ranks' heap peaks, merged (HS_JOB_PEAK_STACKS)
 *    55  TIMELINE_RECORDER stream    the recorder's own memory at each sample of the TIMELINE before it (HS_TIMELINE_RECORDER)
 *    56  JOB_RECORDER      file      job file: per rank the recorder's own memory at its largest (HS_JOB_RECORDER)
 *    50  ACCESS            snapshot  record --access: how pages were read, samples not measured (HS_ACCESS)
 *    51  ACCESS_TYPES      snapshot  record --access: the sampled blocks' use per stack type (HS_ACCESS_TYPES)
 *    52  JOB_ACCESS        file      job file, --access: ranks measured, how (HS_JOB_ACCESS)
 *    53  JOB_ACCESS_SIZES  file      job file, --access: sampled blocks' use per region and size, all ranks (HS_JOB_ACCESS_SIZES)
 *    54  JOB_ACCESS_RANKS  file      job file, --access: each rank's own estimates (HS_JOB_ACCESS_RANKS)
 *    60  MPI_LIBRARY       stream    the MPI library the process runs on, its name and version (HS_MPI_LIBRARY)
 *    61  JOB_MPI_LIBRARY   file      job file: rank 0's MPI library (HS_JOB_MPI_LIBRARY)
 *    62  JOB_COMMAND       file      job file: rank 0's command line (HS_JOB_COMMAND)
 *
 * Every reader must know 1..9 (enum hs_chunk_type); the others (enums
 * hs_track_chunk_type, hs_timeline_chunk_type, hs_ending_chunk_type,
 * hs_sampling_chunk_type, hs_failed_chunk_type, hs_exit_chunk_type,
 * hs_recorder_chunk_type, hs_mpi_library_chunk_type, hs_access_chunk_type) belong to
 * optional modes or rare events, and a reader that does not know them skips them. Ids
 * 15..19 and 23..29 are free for those families; 30 and above for new ones (57..59 are
 * kept for the recorder's own memory, 63 and 64 for the MPI library's family).
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
 *   Every call that returns a block is counted; bytes are size * count. A call that
 *   fails (returns NULL, throws bad_alloc, or posix_memalign's EINVAL/ENOMEM) is in
 *   no size row: FAILED_ALLOCS counts it. realloc(p, 0) with p != NULL is a free,
 *   not an allocation. (Version 1 counted failed calls here too: a malloc(-1) made
 *   a row of size 2^64-1.)
 *
 *   API_COUNTS: free(NULL) and delete of NULL are not counted; failed calls (NULL
 *   returned) are counted in HS_API_FAILED as well as under their own function.
 *
 *   FAILED_ALLOCS: written only when some call failed; the failed calls since
 *   process start (or heapscope_reset()) per (region, API, requested size); the
 *   recorder keeps 4096 distinct sizes, beyond them a row per (region, API) with
 *   size_known 0. Several chunks may appear: rows add up.
 *
 *   STACK_TYPES: a type is a distinct (region, exact size, frame sequence). Frame 0 is
 *   the return address into the code that called the allocation function (e.g.
 *   operator new in libstdc++), frame depth-1 the outermost captured. All frames
 *   are return addresses: symbolize at address - 1. Recorder frames are removed.
 *   Several STACK_TYPES chunks may appear in one snapshot; the reader adds them.
 *
 *   SAMPLING (record --sample-bytes N, HEAPSCOPE_SAMPLE_BYTES): written once after
 *   SETTINGS when stacks are sampled. Each allocation of s > 0 bytes in a region whose
 *   stacks are recorded is then a sample with probability 1 - exp(-s/mean_bytes),
 *   independently of the others; STACK_TYPES.count is the number of samples of the type
 *   (bytes = count * size), not of allocations. SIZE_COUNTS and API_COUNTS stay exact.
 *   A reader that does not know this chunk must not read such a file's stack counts
 *   as allocations.
 *
 *   SNAPSHOT_END: types_crc (version 2) is the crc32 of the types, as u32, of every
 *   chunk of the file before this one, in file order (stream chunks of other threads
 *   included: the writer fills it in as it appends the snapshot). A chunk retyped,
 *   dropped or added before it, crcs redone (what only a crafted file or a writer bug
 *   does), makes the snapshot corrupt: the reader reads up to the previous snapshot's
 *   end and flags the file. Version 1 wrote 0 there.
 *   lost_stacks counts the allocations in the selected sizes and regions
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
 *   (calipers_taken: outermost MPI calls measured; calipers_skipped: MPI calls through
 *   the layer not measured, the rate limit, and calls made inside another MPI call,
 *   which never are; mpi_rss_delta / mpi_pss_delta: sum over measured calls of the
 *   RSS/PSS growth during the call minus the heap growth during it, the MPI library's
 *   non-heap memory: PSS over the calls that map memory, measured with it, the others
 *   read RSS only, their samples' PSS -1; samples_lost: buffer full or write refused) are since process
 *   start as of this chunk (the last chunk has the run's). Per sample: kind (enum
 *   hs_sample_kind); heap_component_bytes: of the heap, blocks allocated inside MPI
 *   calls ("[MPI]" regions); -1 = not measured (boundary samples read RSS only, from
 *   statm). Samples of several threads: sort by mono_ns. Region: for a region
 *   boundary the region that begins or ends; otherwise the process-wide region current
 *   at the sample (MPI samples: the calling thread's region, outside "[MPI]").
 *   TIMELINE_REGIONS: the regions defined since the previous one, in the layout of
 *   REGIONS and with the same ids; written before the TIMELINE chunk that first
 *   refers to them.
 *   TIMELINE_RECORDER: written after each TIMELINE chunk, in the same write (so with
 *   it, or lost with it): for each of its samples, in order, the recorder's own
 *   resident memory when the sample was taken (src/recorder/timeline/own_memory.c: the
 *   resident pages of every mapping the recorder made and of its library's writable
 *   data, by mincore; -1 = not measured). The TIMELINE sample's rss_bytes and
 *   pss_bytes are the process's and include it: the program's are those minus it (its
 *   pages are private, the same bytes of RSS and of PSS). The calipers' mpi_rss_delta
 *   and mpi_pss_delta already leave its growth out. A file without it (an older
 *   recorder) has the process's figures only.
 *   HEAP_PEAK: written after each TIMELINE chunk when heap in use is measured: the
 *   maxima of heap in use, of its MPI part and of the rest since process start (a
 *   fork child: since the fork), as of that chunk (the last one has the run's). Kept
 *   by the recorder at every allocation and free (not from the samples), so a block
 *   held between two samples is in them.
 *
 *   Ending: a snapshot whose reason is CRASH (written by the recorder's handler of
 *   SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT, before the signal's default action or
 *   the program's own handler), SIGNAL (its handler of another signal whose default
 *   ends the process: SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR2 ..., before that
 *   default) or MPI_ABORT (written by the MPI layer's MPI_Abort) holds one ENDING
 *   chunk before SNAPSHOT_END: kind (the same reason), the signal, its si_code (> 0:
 *   a fault; <= 0: sent by kill, raise or abort), MPI_Abort's error code, the fault
 *   address (si_addr; 0 for SIGABRT and for signals sent). Later snapshots of a
 *   process that is ending so (the _exit MPI_Abort ends with, the SIGTERM of the
 *   launcher) keep that reason and chunk.
 *
 *   The process's end: a final snapshot (reason EXIT, EXEC, SIGTERM, SIGINT, SIGNAL,
 *   CRASH, MPI_ABORT: written as the process ends) holds one PROCESS_END chunk: how
 *   (exit, _exit/_Exit, quick_exit, the last thread ending after main's pthread_exit,
 *   a signal, exec, MPI_Abort), the exit status when an exit call was seen (not when
 *   main returned), and flags: END_MPI_UNFINALIZED (the MPI layer saw MPI calls and
 *   no MPI_Finalize: a rank torn down, or one that ended without finalizing),
 *   END_ORPHANED (the parent, a launcher, had ended first). A file whose last complete
 *   snapshot has another reason (API, SIGUSR1, PERIODIC) does not hold its process's
 *   end: the process was killed by SIGKILL or ended by a raw exit system call after
 *   it, or the file was copied while it ran; readers flag it as incomplete.
 *
 *   Memory access, record --access (HEAPSCOPE_ACCESS=1, with SAMPLING): ACCESS and
 *   ACCESS_TYPES come inside a snapshot, after the tracking chunks. The measured blocks
 *   are the sampled ones (SAMPLING): a sample under large_bytes got fresh pages of its own
 *   (it starts a page), a larger one had its whole inner pages made fresh where the
 *   allocator put it (its partial first and last pages take the state of their inner
 *   neighbour; bytes a realloc carried over count as touched). A page is touched when
 *   present or swapped at the look (the zero page counts: it was read); a block is read
 *   first when a look found a page of it on the zero page (read, not written) and it is
 *   not zeroed by contract (calloc). Looks: the watcher's, every poll_ns, at the free, and
 *   at the snapshot for blocks still live. mechanism (enum access_mechanism) says how pages
 *   were read: NONE, none measured (every sample counted in unmeasured_other). Counts in
 *   ACCESS_TYPES are of samples, cumulative since process start (a fork child: since the
 *   fork; heapscope_reset() does not reset them); a row per (region, size, stack type), or
 *   per (region, size) (depth 0) for samples without a stack; several chunks may appear,
 *   rows add up by (region, size, frames). after_bins and by_bins are histograms, binned
 *   as TRACK_TYPES's, of the touched measured blocks' first touch: ns from allocation to
 *   the last look that saw the block untouched (after) and to the first that saw it
 *   touched (by). The readers scale the samples to estimates (analysis/access.py).
 *
 *   The job file (heapscope.<job>.job.hsj, hs_job_chunk_type): another kind of file
 *   with the same header and framing, written once by an MPI job's rank 0 at
 *   MPI_Finalize from every rank's summary reduced inside the job (the MPI layer,
 *   src/mpi/mpi_job.c; the writer, src/recorder/output/job_file.c). It holds no
 *   snapshot: JOB, JOB_REGIONS, JOB_SIZE_COUNTS..., JOB_API_COUNTS..., JOB_RANKS...,
 *   JOB_HOSTS, JOB_PEAK_STACKS, JOB_RECORDER..., [JOB_MPI_LIBRARY], [JOB_COMMAND],
 *   [JOB_ACCESS, JOB_ACCESS_SIZES..., JOB_ACCESS_RANKS...] (with --access), in that
 *   order. Region ids of the counts index JOB_REGIONS (paths, not
 *   trees: the ranks' region ids differ). A rank's figures are those of its snapshot
 *   at MPI_Finalize; its heap/RSS/PSS peaks are the maxima of the timeline samples its
 *   file had received by then: RSS and PSS the program's, net of the recorder's own
 *   memory at each sample, whose own maximum is the rank's JOB_RECORDER row (rows in
 *   JOB_RANKS' order; a job file without JOB_RECORDER comes from an older recorder,
 *   whose RSS/PSS peaks include that memory). JOB_HOSTS sums the net figures. Readers
 *   of profiles skip job files by name.
 *   JOB_PEAK_STACKS (src/recorder/output/job_peak_stacks.c): each rank recorded with
 *   --track gives its per_rank largest stack types by requested bytes live at its own
 *   tracking peak (a type: region path and call path, its sizes added up; region path
 *   and size for blocks tracked without stacks); equal types of several ranks are
 *   merged (ranks, blocks and bytes summed, the largest bytes and its rank, the range
 *   of sizes), the largest first. Frames are (module index, offset from the module's
 *   load bias): modules by path and build-id, so a call path compares equal on every
 *   rank whatever ASLR did; symbolize offset - 1 in the module as a return address. A
 *   message of the reduction keeps at most HSR_JOB_PEAK_KEPT types: missing_bound > 0
 *   says some were dropped and the figures are lower bounds. ranks_tracked 0: no rank
 *   had --track, no type (a report says how to record them, never a figure).
 *
 *   MPI_LIBRARY (hs_mpi_library_chunk_type): written once per process, outside
 *   snapshots, when the MPI layer sees the process's first MPI call (MPI_Init, or an
 *   MPI_Get_version before it): MPI_Get_version's standard version and
 *   MPI_Get_library_version's text, whole (MPICH's runs over several lines: version,
 *   release date, device, configure options); a process that makes no MPI call has
 *   none. A fork child's new file does not repeat it. JOB_MPI_LIBRARY: rank 0's, in
 *   the job file; JOB_COMMAND: rank 0's command line (argv joined by NUL bytes), so a
 *   job file alone says what ran. Both are written when rank 0 knows them (a recorder
 *   without them writes neither: a reader says the library is unknown).
 *
 *   JOB_ACCESS, JOB_ACCESS_SIZES, JOB_ACCESS_RANKS (src/recorder/access/job.c), last in
 *   the file, when some rank recorded with --access: ACCESS_TYPES' counts per
 *   (region path, size) summed over the ranks as of their MPI_Finalize (no histograms),
 *   and each rank's estimates: its counts of each (region, size) it measured split by
 *   its measured samples (blocks and bytes of those cells, touched and untouched bytes,
 *   blocks never touched, read first). sample_mean 0: the ranks sampled with different
 *   means, and the rows must not be pooled into one estimate.
 */
#ifndef HEAPSCOPE_PROFILE_FORMAT_H
#define HEAPSCOPE_PROFILE_FORMAT_H

/* HS_MAGIC, HS_FORMAT_VERSION, HS_HEADER_SIZE, HS_CHUNK_HEADER_SIZE, HS_NO_PARENT,
 * HS_NO_LABEL, HS_HEADER_WRITE_FAILED; enum hs_chunk_type (HS_CHUNK_*),
 * hs_track_chunk_type (HS_TRACK_*, HS_TRACE_*), hs_timeline_chunk_type (HS_TIMELINE_*),
 * hs_failed_chunk_type (HS_FAILED_ALLOCS), hs_snapshot_reason
 * (HS_REASON_*), hs_api (HS_API_*), hs_unwinder, hs_sample_kind (HS_SAMPLE_*),
 * hs_heap_measure, hs_trace_codec (HS_CODEC_*), hs_trace_event (HS_EVENT_*),
 * hs_ending_chunk_type (HS_ENDING), hs_exit_chunk_type (HS_PROCESS_END), hs_process_end
 * (HS_END_*), hs_recorder_chunk_type (HS_TIMELINE_RECORDER, HS_JOB_RECORDER),
 * hs_mpi_library_chunk_type (HS_MPI_LIBRARY, HS_JOB_MPI_LIBRARY, HS_JOB_COMMAND),
 * hs_access_chunk_type (HS_ACCESS*), hs_access_mechanism. */
#include "profile_format_table.h"

#endif
