"""Every chunk type of the table, written with known values (tests/helpers/profile_builder,
whose payloads come from the table) and read back through the real reader; and the C
writer's real output: every chunk it writes is one the table knows and decodes whole."""
import zlib

import pytest
import zstandard

from heapscope.errors import HeapscopeError
from heapscope.profile import format as fmt
from heapscope.profile import framing, read_profile
from heapscope.profile.model import lifetime_bin
from heapscope.profile.timeline import read_timeline
from helpers.profile_builder import API, ProfileBuilder, chunk, header, payload, trace_events

ALL_CHUNKS = [c.name for c in fmt.TABLE.chunks]


def sample_values(fields, seed):
    """Distinct known values for a layout: each field its own number (unsigned ones with
    their top bit set, signed ones negative), two rows per repeat, three values per
    array; count fields are left out (the writer fills them in)."""
    values = {}
    for i, f in enumerate(fields):
        n = seed * 100 + i + 1
        if f.reserved or any(g.count == f.name for g in fields):
            continue
        if f.type == "repeat":
            values[f.name] = [sample_values(f.body, n * 10 + r) for r in range(2)]
        elif f.type == "str":
            text = f"{f.name}-{n}-é"
            values[f.name] = tuple(f"{text}.{k}" for k in range(3)) if f.count else text
        elif f.type == "bytes":
            size = f.count if isinstance(f.count, int) else 3
            values[f.name] = bytes((n + k) % 256 for k in range(size))
        elif isinstance(f.count, tuple):
            values[f.name] = tuple(n * 1000 + k for k in range(bin(values[f.count[1]]).count("1")))
        elif f.count is not None:   # (kept within the field's width: ids past 42 nest deep)
            values[f.name] = tuple((n * 1000 + k) % (1 << (int(f.type[1:]) - 1)) for k in range(3))
        elif f.enum:
            values[f.name] = fmt.TABLE.enums[f.enum].members[-1].value
        elif f.name.endswith("mask"):
            values[f.name] = 0b1000000000101 << (n % 7)
        else:
            bits = int(f.type[1:])
            values[f.name] = -(n % (1 << (bits - 2))) - 1 if f.type[0] == "i" else \
                (1 << (bits - 1)) + n
    return values


@pytest.mark.parametrize("name", ALL_CHUNKS)
def test_every_layout_encodes_and_decodes_whole(name):
    c = fmt.TABLE.chunk(name)
    values = sample_values(c.layout.fields, c.id)
    data = payload(name, **values)
    record = fmt.CODECS[c.id].decode(data, whole=True)
    assert _without_counts(fmt.CODECS[c.id].as_dict(record), c.layout.fields) == values
    assert fmt.CODECS[c.id].encode(record) == data


def _without_counts(plain, fields):
    counts = {g.count for g in fields if isinstance(g.count, str)}
    out = {}
    for f in fields:
        if f.name in counts or f.reserved:
            continue
        value = plain[f.name]
        out[f.name] = [_without_counts(r, f.body) for r in value] if f.type == "repeat" else value
    return out


# ---- through the reader, one chunk type at a time ----

def test_process_and_settings(tmp_path):
    b = ProfileBuilder(pid=31337, ppid=4, rank=12, host="cn-7", exe="/opt/x/bin/solve",
                       cmdline=("solve", "-n", "a b"), job_id="job.88", recorder_version="7.1",
                       stack_sizes="12,100-200", stack_regions="split,post", max_depth=48,
                       unwinder=fmt.UNWINDER_FRAME_POINTERS)
    b.snapshot()
    p = read_profile(b.write(tmp_path / "p.hsp"))
    assert (p.pid, p.ppid, p.rank, p.host, p.exe, p.cmdline, p.job_id, p.recorder_version) == \
        (31337, 4, 12, "cn-7", "/opt/x/bin/solve", ["solve", "-n", "a b"], "job.88", "7.1")
    assert p.settings == dict(stack_sizes="12,100-200", stack_regions="split,post", max_depth=48,
                              unwinder="frame-pointers", sample_bytes=0)


def test_sampling_turns_samples_into_estimates(tmp_path):
    """SAMPLING: STACK_TYPES counts are samples; the reader splits each (region, size)'s
    exact count among its types by their samples, and keeps the samples."""
    b = ProfileBuilder()
    b.add("SAMPLING", mean_bytes=4096)
    b.snapshot(sizes=[(0, 100, 1000), (0, 7, 50)],
               stacks=[(0, 100, 3, 300, (0x401000,)), (0, 100, 1, 100, (0x402000,))])
    p = read_profile(b.write(tmp_path / "s.hsp"))
    assert p.settings["sample_bytes"] == 4096
    assert sorted((t.count, t.bytes, t.samples) for t in p.stack_types) == [
        (250, 25_000, 1), (750, 75_000, 3)]
    assert p.size_counts[("(none)", 100)] == 1000       # the counts stay exact


def test_snapshot_begin_and_end(tmp_path):
    b = ProfileBuilder()
    b.snapshot(reason="api")
    b.snapshot(reason="sigusr1", mono_ns=987_654_321, lost=17, threads=9)
    p = read_profile(b.write(tmp_path / "s.hsp"))
    assert (p.snapshot_seq, p.snapshot_reason, p.snapshot_mono_ns) == (1, "sigusr1", 987_654_321)
    assert (p.lost_stacks, p.total_threads) == (17, 9)


def test_modules_and_regions(tmp_path):
    b = ProfileBuilder()
    b.snapshot(regions=[(4, 0, "solve"), (9, 4, "inner")],
               modules=[("/lib/libz.so.1", 0x7F00_0000_0000, bytes.fromhex("00ff10"),
                         [(0x7F00_0000_1000, 0x7F00_0000_9000), (0x7F00_0001_0000, 0x7F00_0001_2000)])])
    p = read_profile(b.write(tmp_path / "m.hsp"))
    (m,) = p.modules
    assert (m.path, m.bias, m.build_id) == ("/lib/libz.so.1", 0x7F00_0000_0000, "00ff10")
    assert m.ranges == ((0x7F00_0000_1000, 0x7F00_0000_9000), (0x7F00_0001_0000, 0x7F00_0001_2000))
    assert {r.id: (r.parent, r.name, r.path) for r in p.regions.values()} == {
        0: (fmt.NO_PARENT, "", "(none)"), 4: (0, "solve", "solve"), 9: (4, "inner", "solve/inner")}


def test_size_api_and_stack_counts(tmp_path):
    b = ProfileBuilder()
    b.snapshot(regions=[(1, 0, "r")], sizes=[(1, 24, 5), (0, 2**40, 3)],
               apis=[(1, API["posix_memalign"], 6), (0, API["operator_delete"], 2**33)],
               stacks=[(1, 24, 5, 120, (0x401000, 2**64 - 1))])
    p = read_profile(b.write(tmp_path / "c.hsp"))
    assert p.size_counts == {("r", 24): 5, ("(none)", 2**40): 3}
    assert p.api_counts == {("r", "posix_memalign"): 6, ("(none)", "operator_delete"): 2**33}
    assert [(s.region, s.size, s.count, s.bytes, s.frames) for s in p.stack_types] == [
        ("r", 24, 5, 120, (0x401000, 2**64 - 1))]


def test_track_summary_and_types(tmp_path):
    time_hist = {0: 2, 5: 1, 63: 4}
    between_hist = {1: 7}
    summary = payload("TRACK_SUMMARY", temporary_max_between=3, temporary_max_ns=5000,
                      peak_bytes=4096, peak_mono_ns=123_456, end_bytes=512, untracked=2,
                      table_bytes=65536, max_blocks=1024)
    rows = payload("TRACK_TYPES", rows=[
        dict(region=1, depth=2, size=64, allocs=10, frees=7, temporaries=5, live_at_peak=4,
             live_at_end=3, extra_bytes=80, time_mask=sum(1 << b for b in time_hist),
             between_mask=sum(1 << b for b in between_hist),
             time_bins=tuple(time_hist[b] for b in sorted(time_hist)),
             between_bins=tuple(between_hist.values()), frames=(0x401234, 0x401500)),
        dict(region=0, depth=0, size=8, allocs=1, frees=0, temporaries=0, live_at_peak=1,
             live_at_end=1, extra_bytes=8, time_mask=0, between_mask=0, time_bins=(),
             between_bins=(), frames=())])
    b = ProfileBuilder()
    b.snapshot(regions=[(1, 0, "work")], extra=[(fmt.TRACK_SUMMARY, summary), (fmt.TRACK_TYPES, rows)])
    t = read_profile(b.write(tmp_path / "t.hsp")).tracking
    assert t.source == "track"
    assert (t.temporary_max_between, t.temporary_max_ns, t.peak_bytes, t.peak_mono_ns, t.end_bytes,
            t.untracked, t.table_bytes) == (3, 5000, 4096, 123_456, 512, 2, 65536)
    first, second = t.stacks
    assert (first.region, first.size, first.frames) == ("work", 64, (0x401234, 0x401500))
    life = first.life
    assert (life.allocs, life.frees, life.temporaries, life.live_at_peak, life.live_at_end) == (10, 7, 5, 4, 3)
    assert {b: n for b, n in enumerate(life.time_hist) if n} == time_hist
    assert {b: n for b, n in enumerate(life.between_hist) if n} == between_hist
    assert (second.region, second.size, second.frames, second.life.live_at_end_bytes) == ("(none)", 8, (), 8)
    assert t.extra == {8: (1, 8), 64: (10, 80)}
    # a recorder before TRACK_UNTRACKED: the untracked blocks' bytes are unknown
    assert t.untracked_bytes is None and t.peak_is_lower_bound


def test_access_and_its_types(tmp_path):
    """record --access: the summary, and rows added up per (region, size, frames) over the
    threads that saw a path; figures that cannot hold are a malformed chunk."""
    summary = payload("ACCESS", mechanism=1, page_size=4096, poll_ns=10_000_000,
                      sample_mean=4096, large_bytes=65536, unmeasured_pool=1, unmeasured_align=2,
                      unmeasured_other=3, pool_bytes=1 << 36, pool_peak_bytes=8192, rows_lost=4,
                      live_unread=5, flags=1)
    after, by = {0: 3, 20: 1}, {24: 4}
    row = dict(region=1, depth=2, size=3000, samples=5, measured=5, live=1, touched_bytes=12000,
               never_touched=1, read_first=2, zeroed=0, huge=0,
               after_mask=sum(1 << b for b in after), by_mask=sum(1 << b for b in by),
               after_bins=tuple(after[b] for b in sorted(after)), by_bins=(4,),
               frames=(0x401234, 0x401500))
    bare = dict(row, region=0, depth=0, size=200, samples=3, measured=2, live=0, touched_bytes=0,
                never_touched=2, read_first=0, after_mask=0, by_mask=0, after_bins=(),
                by_bins=(), frames=())
    rows = payload("ACCESS_TYPES", rows=[row, bare, row])     # one path from two threads
    b = ProfileBuilder()
    b.snapshot(regions=[(1, 0, "work")], extra=[(fmt.ACCESS, summary), (fmt.ACCESS_TYPES, rows)])
    a = read_profile(b.write(tmp_path / "a.hsp")).access
    assert (a.mechanism, a.page_size, a.poll_ns, a.sample_mean, a.large_bytes) == (
        "pagemap-scan", 4096, 10_000_000, 4096, 65536)
    assert a.unmeasured == dict(pool=1, align=2, other=3)
    assert (a.pool_bytes, a.pool_peak_bytes, a.rows_lost, a.live_unread, a.forked_flags) == (
        1 << 36, 8192, 4, 5, True)
    bare_row, path = a.rows
    assert (path.region, path.size, path.frames) == ("work", 3000, (0x401234, 0x401500))
    assert (path.samples, path.measured, path.live, path.touched_bytes, path.never_touched,
            path.read_first) == (10, 10, 2, 24000, 2, 4)
    assert {b: n for b, n in enumerate(path.after_hist) if n} == {0: 6, 20: 2}
    assert {b: n for b, n in enumerate(path.by_hist) if n} == {24: 8}
    assert (bare_row.region, bare_row.size, bare_row.frames, bare_row.never_touched) == (
        "(none)", 200, (), 2)
    for bad, why in ((dict(row, measured=6), "6 measured of 5 samples"),
                     (dict(row, touched_bytes=15001), "15001 bytes touched"),
                     (dict(row, by_bins=(3,)), "first-touch histograms")):
        b = ProfileBuilder()
        b.snapshot(extra=[(fmt.ACCESS, summary), (fmt.ACCESS_TYPES, payload("ACCESS_TYPES", rows=[bad]))])
        path_ = b.write(tmp_path / "bad.hsp")
        with pytest.raises(HeapscopeError, match=f"malformed ACCESS_TYPES chunk.*{why}"):
            read_profile(path_)


def test_track_untracked(tmp_path):
    summary = payload("TRACK_SUMMARY", temporary_max_between=0, temporary_max_ns=0,
                      peak_bytes=4096, peak_mono_ns=1, end_bytes=0, untracked=7,
                      table_bytes=65536, max_blocks=1024)
    left_out = payload("TRACK_UNTRACKED", blocks=7, bytes=7 * 48 + 2**40)
    b = ProfileBuilder()
    b.snapshot(extra=[(fmt.TRACK_SUMMARY, summary), (fmt.TRACK_UNTRACKED, left_out)])
    t = read_profile(b.write(tmp_path / "u.hsp")).tracking
    assert (t.untracked, t.untracked_bytes, t.peak_is_lower_bound) == (7, 7 * 48 + 2**40, True)


@pytest.mark.parametrize("codec", ["none", "deflate", "zstd"])
def test_trace_start_and_events(tmp_path, codec):
    """Two threads' chunks; a stack type; a temporary, a long-lived block, a leak."""
    main = [("stack", 1, 2, 48, (0x401111, 0x402222)),
            ("alloc", 1, 1_000, 0x5000, 48, 1, 2, 8),         # temporary: freed next
            ("free", 2, 1_500, 0x5000),
            ("alloc", 3, 2_000, 0x6000, 100, 0, 0, 4),        # freed by the other thread
            ("alloc", 5, 9_000, 0x4000, 16, 0, 0, 0)]         # never freed
    other = [("alloc", 4, 3_000, 0x7000, 32, 0, 2, 0),
             ("free", 6, 10_000, 0x6000)]
    b = ProfileBuilder()
    b.add("TRACE_START", version=1, temporary_max_between=0, temporary_max_ns=0, start_mono_ns=500)
    for thread, events in ((0, main), (1, other)):
        raw = trace_events(events)
        data = _pack(codec, raw)
        seqs = [e[1] for e in events if e[0] != "stack"]
        b.add("TRACE_EVENTS", thread=thread, events=len(seqs), first_seq=min(seqs),
              last_seq=max(seqs), codec=getattr(fmt, "CODEC_" + codec.upper()), raw_len=len(raw),
              data=data)
    b.snapshot(regions=[(2, 0, "step")], sizes=[(2, 48, 1), (0, 100, 1), (2, 32, 1), (0, 16, 1)])
    t = read_profile(b.write(tmp_path / "e.hsp")).tracking
    assert t.source == "trace"
    rows = {(s.region, s.size, s.frames): s.life for s in t.stacks}
    assert set(rows) == {("step", 48, (0x401111, 0x402222)), ("(none)", 100, ()), ("step", 32, ()),
                         ("(none)", 16, ())}
    tmp = rows[("step", 48, (0x401111, 0x402222))]
    assert (tmp.allocs, tmp.frees, tmp.temporaries, tmp.live_at_end) == (1, 1, 1, 0)
    assert tmp.time_hist[lifetime_bin(500)] == 1
    held = rows[("(none)", 100, ())]
    assert (held.allocs, held.frees, held.temporaries) == (1, 1, 0)
    assert held.between_hist[lifetime_bin(1)] == 1      # the main thread allocated once more
    assert rows[("(none)", 16, ())].live_at_end == 1 and rows[("step", 32, ())].live_at_end == 1
    # peak: 100 + 32 + 16 live at seq 5, before the free of seq 6
    assert (t.peak_bytes, t.peak_mono_ns, t.end_bytes) == (148, 9_000 - 500, 48)
    assert t.extra == {16: (1, 0), 32: (1, 0), 48: (1, 8), 100: (1, 4)}


def _pack(codec, raw):
    if codec == "zstd":
        return zstandard.ZstdCompressor().compress(raw)
    if codec == "deflate":
        z = zlib.compressobj(6, zlib.DEFLATED, -15)
        return z.compress(raw) + z.flush()
    return raw


def test_timeline_and_its_regions(tmp_path):
    sample = dict(heap_bytes=1 << 20, heap_component_bytes=4096, rss_bytes=8 << 20, pss_bytes=-1)
    b = ProfileBuilder()
    b.add("TIMELINE_REGIONS", regions=[dict(id=0, parent_id=fmt.NO_PARENT, name=""),
                                       dict(id=3, parent_id=0, name="solve")])
    b.add("TIMELINE", interval_ns=20_000_000, caliper_ns=-1, heap_measure=fmt.HEAP_MEASURE_REQUESTED,
          calipers_taken=5, calipers_skipped=6, mpi_rss_delta=-7, mpi_pss_delta=8, samples_lost=0,
          labels=("MPI_Allreduce",), samples=[
              dict(mono_ns=300, kind=fmt.SAMPLE_MPI_AFTER, region=3, label=0, **sample),
              dict(mono_ns=100, kind=fmt.SAMPLE_REGION_BEGIN, region=3, label=fmt.NO_LABEL, **sample),
              dict(mono_ns=200, kind=fmt.SAMPLE_PERIODIC, region=0, label=fmt.NO_LABEL, **sample)])
    path = b.write(tmp_path / "tl.hsp")                  # no snapshot: a killed process
    tl = read_timeline(path).timeline
    assert (tl.interval_ns, tl.heap_measure, tl.calipers_taken, tl.calipers_skipped,
            tl.mpi_rss_delta_bytes, tl.mpi_pss_delta_bytes) == (20_000_000, "requested", 5, 6, -7, 8)
    assert [(s.mono_ns, s.kind, s.region, s.label) for s in tl.samples] == [
        (100, "region-begin", "solve", "solve"), (200, "periodic", "(none)", ""),
        (300, "mpi-after", "solve", "MPI_Allreduce")]
    assert {(s.heap_bytes, s.heap_mpi_bytes, s.rss_bytes, s.pss_bytes) for s in tl.samples} == {
        (1 << 20, 4096, 8 << 20, -1)}
    b.snapshot()
    assert read_profile(b.write(tmp_path / "tl2.hsp")).timeline.samples == tl.samples


def test_heap_peak_the_last_one_counts(tmp_path):
    """HEAP_PEAK follows each TIMELINE chunk: the last one holds the run's exact peaks;
    without one (heap not measured, an older recorder) the peaks are None."""
    b = ProfileBuilder()
    b.add("TIMELINE", interval_ns=0, caliper_ns=-1, heap_measure=fmt.HEAP_MEASURE_USABLE,
          calipers_taken=0, calipers_skipped=0, mpi_rss_delta=0, mpi_pss_delta=0,
          samples_lost=0, labels=(), samples=[dict(
              mono_ns=1, kind=fmt.SAMPLE_PERIODIC, region=0, label=fmt.NO_LABEL, heap_bytes=10,
              heap_component_bytes=0, rss_bytes=-1, pss_bytes=-1)])
    path = b.write(tmp_path / "none.hsp")
    assert read_timeline(path).timeline.heap_peak is None
    b.add("HEAP_PEAK", heap_measure=fmt.HEAP_MEASURE_USABLE, peak_bytes=500,
          peak_component_bytes=100, peak_app_bytes=450)
    b.add("HEAP_PEAK", heap_measure=fmt.HEAP_MEASURE_USABLE, peak_bytes=7_000_000,
          peak_component_bytes=6_400_000, peak_app_bytes=600_000)
    for read in (read_timeline, lambda f: (b.snapshot(), read_profile(b.write(f)))[1]):
        tl = read(b.write(tmp_path / "peak.hsp")).timeline
        assert (tl.heap_peak, tl.heap_peak_mpi, tl.heap_peak_app) == (7_000_000, 6_400_000, 600_000)
    bad = ProfileBuilder()
    bad.add("TIMELINE", interval_ns=0, caliper_ns=-1, heap_measure=fmt.HEAP_MEASURE_USABLE,
            calipers_taken=0, calipers_skipped=0, mpi_rss_delta=0, mpi_pss_delta=0,
            samples_lost=0, labels=(), samples=[])
    bad.add("HEAP_PEAK", heap_measure=0, peak_bytes=-1, peak_component_bytes=0, peak_app_bytes=0)
    with pytest.raises(HeapscopeError, match="malformed HEAP_PEAK chunk.*negative"):
        read_timeline(bad.write(tmp_path / "bad.hsp"))


def _timeline(b, rss_pss):
    b.add("TIMELINE", interval_ns=0, caliper_ns=-1, heap_measure=fmt.HEAP_MEASURE_USABLE,
          calipers_taken=0, calipers_skipped=0, mpi_rss_delta=0, mpi_pss_delta=0,
          samples_lost=0, labels=(), samples=[dict(
              mono_ns=t, kind=fmt.SAMPLE_PERIODIC, region=0, label=fmt.NO_LABEL, heap_bytes=10,
              heap_component_bytes=0, rss_bytes=rss, pss_bytes=pss) for t, (rss, pss) in rss_pss])


def test_timeline_recorder_memory_is_apart_from_the_program(tmp_path):
    """TIMELINE_RECORDER follows each TIMELINE chunk: the recorder's own resident bytes per
    sample, which the reader takes out of RSS and PSS (the program's figures) and keeps
    beside them; a file without it (an older recorder) keeps the process's figures, the
    recorder's unknown (-1); a count that does not match its TIMELINE is an error."""
    old = ProfileBuilder()
    _timeline(old, [(1, (9000, 7000))])
    tl = read_timeline(old.write(tmp_path / "old.hsp")).timeline
    assert [(s.rss_bytes, s.pss_bytes, s.recorder_bytes) for s in tl.samples] == [(9000, 7000, -1)]
    assert not tl.recorder_measured
    b = ProfileBuilder()
    _timeline(b, [(1, (9000, 7000)), (2, (12000, -1))])
    b.add("TIMELINE_RECORDER", count=2, recorder_bytes=(3000, 4000))
    _timeline(b, [(3, (15000, 11000))])
    b.add("TIMELINE_RECORDER", count=1, recorder_bytes=(-1,))
    _timeline(b, [(4, (16000, 12000))])      # cut short before its TIMELINE_RECORDER
    for read in (read_timeline, lambda f: (b.snapshot(), read_profile(b.write(f)))[1]):
        tl = read(b.write(tmp_path / "new.hsp")).timeline
        assert [(s.mono_ns, s.rss_bytes, s.pss_bytes, s.recorder_bytes) for s in tl.samples] == [
            (1, 6000, 4000, 3000), (2, 8000, -1, 4000), (3, 15000, 11000, -1),
            (4, 16000, 12000, -1)]
        assert tl.recorder_measured
    for bad_count, why in ((3, "3 samples, but the TIMELINE chunk before it has 2"),):
        bad = ProfileBuilder()
        _timeline(bad, [(1, (9000, 7000)), (2, (9000, 7000))])
        bad.add("TIMELINE_RECORDER", count=bad_count, recorder_bytes=(1, 2, 3))
        with pytest.raises(HeapscopeError, match="malformed TIMELINE_RECORDER chunk.*" + why):
            read_timeline(bad.write(tmp_path / "bad.hsp"))
    bad = ProfileBuilder()
    _timeline(bad, [(1, (9000, 7000))])
    bad.add("TIMELINE_RECORDER", count=1, recorder_bytes=(-5,))
    with pytest.raises(HeapscopeError, match="malformed TIMELINE_RECORDER chunk.*negative"):
        read_timeline(bad.write(tmp_path / "neg.hsp"))


def test_ending_of_a_crash_and_of_mpi_abort(tmp_path):
    crash = payload("ENDING", kind=fmt.REASON_CRASH, signal=11, si_code=1, error_code=0,
                    fault_address=0xDEAD0)
    b = ProfileBuilder()
    b.snapshot(reason="crash", extra=[(fmt.ENDING, crash)])
    p = read_profile(b.write(tmp_path / "crash.hsp"))
    assert p.snapshot_reason == "crash"
    assert (p.ending.kind, p.ending.signal, p.ending.signal_name, p.ending.si_code,
            p.ending.fault_address) == ("crash", 11, "SIGSEGV", 1, 0xDEAD0)
    abort = payload("ENDING", kind=fmt.REASON_MPI_ABORT, signal=0, si_code=0, error_code=-17,
                    fault_address=0)
    b = ProfileBuilder()
    b.snapshot(reason="crash", extra=[(fmt.ENDING, crash)])   # an earlier snapshot's is not used
    b.snapshot(reason="mpi-abort", extra=[(fmt.ENDING, abort)])
    p = read_profile(b.write(tmp_path / "abort.hsp"))
    assert (p.snapshot_reason, p.ending.kind, p.ending.error_code, p.ending.signal) == (
        "mpi-abort", "mpi-abort", -17, 0)
    b = ProfileBuilder()
    b.snapshot(reason="crash", extra=[(fmt.ENDING, crash)]).snapshot(reason="exit")
    assert read_profile(b.write(tmp_path / "later.hsp")).ending is None


def test_process_end_and_the_ending_of_another_signal(tmp_path):
    """PROCESS_END: which exit and its status (when seen), a rank torn down before
    MPI_Finalize, a parent gone; ENDING of kind "signal" names the signal."""
    end = payload("PROCESS_END", how=fmt.END_EXIT, status=3,
                  flags=fmt.END_STATUS_KNOWN | fmt.END_MPI_UNFINALIZED | fmt.END_ORPHANED)
    b = ProfileBuilder()
    b.snapshot(reason="exit", extra=[(fmt.PROCESS_END, end)])
    p = read_profile(b.write(tmp_path / "exit.hsp"))
    assert (p.process_end.how, p.process_end.status, p.process_end.mpi_unfinalized,
            p.process_end.orphaned) == ("exit", 3, True, True)
    unseen = payload("PROCESS_END", how=fmt.END_EXIT, status=0, flags=0)
    b = ProfileBuilder()
    b.snapshot(reason="exit", extra=[(fmt.PROCESS_END, unseen)])
    p = read_profile(b.write(tmp_path / "main.hsp"))
    assert (p.process_end.how, p.process_end.status, p.process_end.mpi_unfinalized) == ("exit", None, False)
    hup = payload("ENDING", kind=fmt.REASON_SIGNAL, signal=1, si_code=0, error_code=0, fault_address=0)
    b = ProfileBuilder()
    b.snapshot(reason="signal", extra=[(fmt.ENDING, hup),
                                       (fmt.PROCESS_END, payload("PROCESS_END", how=fmt.END_SIGNAL,
                                                                 status=0, flags=0))])
    p = read_profile(b.write(tmp_path / "hup.hsp"))
    assert (p.ending.kind, p.ending.signal_name, p.process_end.how, p.complete) == (
        "signal", "SIGHUP", "signal", True)
    bad = ProfileBuilder()
    bad.snapshot(extra=[(fmt.PROCESS_END, payload("PROCESS_END", how=77, status=0, flags=0))])
    with pytest.raises(HeapscopeError, match=r"malformed SNAPSHOT_END chunk at byte \d+: PROCESS_END how 77"):
        read_profile(bad.write(tmp_path / "bad.hsp"))


def test_job_file_chunks(tmp_path):
    """A job file built from the table's layouts reads back figure by figure; a row
    naming a host the file does not have, and a cut file, are one-line errors."""
    from heapscope.profile.job_file import read_job_file
    head = header(start_real_ns=5)
    job = payload("JOB", ranks=3, hosts=1, summarized=2, reserved=0, summary_ns=1_000_000,
                  reduce_ns=2_500_000, job_id="77", per_rank="none", recorder_version="0.1.0",
                  exe="/apps/sim")
    regions = payload("JOB_REGIONS", count=2, regions=[dict(path="(none)"),
                                                        dict(path="solve/[MPI]")])
    sizes = payload("JOB_SIZE_COUNTS", count=2, rows=[dict(region=0, reserved=0, size=24, count=5),
                                                      dict(region=1, reserved=0, size=8, count=7)])
    apis = payload("JOB_API_COUNTS", count=1, rows=[dict(region=0, api=0, calls=12)])

    def rank(r, host, present):
        return dict(rank=r, host=host, pid=100 + r, reason=fmt.REASON_API, present=present,
                    kept=r == 0, alloc_app_blocks=5, alloc_mpi_blocks=7, alloc_app_bytes=120,
                    alloc_mpi_bytes=56, heap_peak=900, heap_app_peak=600, heap_mpi_peak=300,
                    rss_peak=4096, pss_peak=2048, mpi_rss=10, mpi_pss=5)
    ranks = payload("JOB_RANKS", count=2, ranks=[rank(0, 0, 31), rank(2, 0, 1)])
    hosts = payload("JOB_HOSTS", count=1, hosts=[dict(name="n1", ranks=2, reserved=0, rss_sum=4096,
                                                      rss_max=4096, pss_sum=2048, pss_max=2048)])
    body = head + b"".join(chunk(name, p) for name, p in (
        ("JOB", job), ("JOB_REGIONS", regions), ("JOB_SIZE_COUNTS", sizes),
        ("JOB_API_COUNTS", apis), ("JOB_RANKS", ranks), ("JOB_HOSTS", hosts)))
    path = tmp_path / "heapscope.77.job.hsj"
    path.write_bytes(body)
    j = read_job_file(path)
    assert (j.job_id, j.size, j.summary_ns, j.reduce_ns, j.per_rank, j.exe) == (
        "77", 3, 1_000_000, 2_500_000, "none", "/apps/sim")
    assert j.size_counts == {("(none)", 24): 5, ("solve/[MPI]", 8): 7}
    assert j.api_counts == {("(none)", "malloc"): 12}
    assert [(r.rank, r.host, r.pid, r.reason, r.kept) for r in j.ranks] == [
        (0, "n1", 100, "api", True), (2, "n1", 102, "api", False)]
    assert j.ranks[0].metrics["alloc_bytes"] == 176 and j.ranks[0].metrics["mpi_pss"] == 5
    # present = 1: the counts only; every other figure unknown, never 0
    assert j.ranks[1].metrics["alloc_mpi_blocks"] == 7
    assert all(j.ranks[1].metrics[k] is None for k in ("heap_peak", "rss_peak", "pss_peak", "mpi_rss"))
    assert j.hosts == [dict(host="n1", ranks=2, rss_sum=4096, rss_max=4096, pss_sum=2048,
                            pss_max=2048)]
    assert j.recorder is None       # an older recorder: RSS/PSS peaks include its memory
    assert all(r.metrics["recorder_peak"] is None for r in j.ranks)
    # JOB_RECORDER: per rank, in JOB_RANKS' order, the recorder's own peak (-1: none)
    own = payload("JOB_RECORDER", count=2, ranks=[dict(rank=0, reserved=0, recorder_peak=1536),
                                                  dict(rank=2, reserved=0, recorder_peak=-1)])
    path.write_bytes(body + chunk("JOB_RECORDER", own))
    j = read_job_file(path)
    assert [r.metrics["recorder_peak"] for r in j.ranks] == [1536, None]
    values, have = j.rank_columns()["recorder_peak"]
    assert values.tolist() == [1536, -1] and have.tolist() == [True, False]
    assert (j.hosts[0]["recorder_sum"], j.hosts[0]["recorder_max"]) == (1536, 1536)
    assert not j.warnings
    swapped = payload("JOB_RECORDER", count=2, ranks=[dict(rank=2, reserved=0, recorder_peak=1),
                                                      dict(rank=0, reserved=0, recorder_peak=1)])
    path.write_bytes(body + chunk("JOB_RECORDER", swapped))
    with pytest.raises(HeapscopeError, match="JOB_RECORDER's 2 ranks are not JOB_RANKS'"):
        read_job_file(path)
    # its rows over two chunks, the second cut: the first rank's peak, the other's unknown
    first = payload("JOB_RECORDER", count=1, ranks=[dict(rank=0, reserved=0, recorder_peak=1536)])
    second = payload("JOB_RECORDER", count=1, ranks=[dict(rank=2, reserved=0, recorder_peak=7)])
    path.write_bytes(body + chunk("JOB_RECORDER", first) + chunk("JOB_RECORDER", second)[:-3])
    j = read_job_file(path)
    assert [r.metrics["recorder_peak"] for r in j.ranks] == [1536, None]
    assert len(j.warnings) == 1 and j.warnings[0].endswith(
        "without the recorder's own memory of 1 rank")
    # it comes before rank 0's command line: after it, out of place, read up to it and said
    path.write_bytes(body + chunk("JOB_COMMAND", payload("JOB_COMMAND", cmdline="sim"))
                     + chunk("JOB_RECORDER", own))
    j = read_job_file(path)
    assert j.cmdline == ["sim"] and j.recorder is None
    assert "JOB_RECORDER chunk at byte" in j.warnings[0] and "out of place" in j.warnings[0]
    bad = payload("JOB_RANKS", count=2, ranks=[rank(0, 3, 31), rank(2, 0, 1)])
    path.write_bytes(head + chunk("JOB", job) + chunk("JOB_RANKS", bad) + chunk("JOB_HOSTS", hosts))
    with pytest.raises(HeapscopeError, match="rank 0 on host 3 of 1"):
        read_job_file(path)
    path.write_bytes(body[:-5])
    with pytest.raises(HeapscopeError, match=r"job file incomplete: cut short at byte \d+"):
        read_job_file(path)


def test_job_access(tmp_path):
    """record --access in a job file: rows per (region, size) added up, each rank's
    estimates, after the MPI library's chunks as the writer puts them; a row that cannot
    hold and rows before JOB_ACCESS are one-line errors, JOB_ACCESS twice or before
    JOB_COMMAND damage that is said."""
    from heapscope.profile.job_file import read_job_file
    head = header(start_real_ns=5)
    job = payload("JOB", ranks=2, hosts=0, summarized=0, reserved=0, summary_ns=1, reduce_ns=2,
                  job_id="78", per_rank="none", recorder_version="0.1.0", exe="/apps/sim")
    whole = chunk("JOB", job) + chunk("JOB_REGIONS", payload("JOB_REGIONS", count=0, regions=[])) \
        + chunk("JOB_HOSTS", payload("JOB_HOSTS", count=0, hosts=[]))
    command = chunk("JOB_COMMAND", payload("JOB_COMMAND", cmdline="/apps/sim"))
    summary = payload("JOB_ACCESS", ranks=2, mechanism=2, sample_mean=4096, poll_ns=10_000_000,
                      unmeasured=3)
    row = dict(region="solve/[MPI]", size=3000, samples=4, measured=4, live=1, touched_bytes=9000,
               never_touched=1, read_first=0, zeroed=0, huge=0)
    sizes = payload("JOB_ACCESS_SIZES", count=2, rows=[row, row])
    ranks = payload("JOB_ACCESS_RANKS", count=2, ranks=[
        dict(rank=r, samples=4, measured=4, blocks=10, bytes=30000, touched_bytes=22500,
             untouched_bytes=7500, never_touched=2, read_first=r) for r in (1, 0)])
    path = tmp_path / "heapscope.78.job.hsj"
    access = chunk("JOB_ACCESS", summary) + chunk("JOB_ACCESS_SIZES", sizes) \
        + chunk("JOB_ACCESS_RANKS", ranks)
    path.write_bytes(head + whole + command + access)
    j = read_job_file(path)
    assert (j.cmdline, j.warnings) == (["/apps/sim"], [])
    a = j.access
    assert (a.ranks_measured, a.mechanism, a.sample_mean, a.poll_ns, a.unmeasured) == (
        2, "pagemap", 4096, 10_000_000, 3)
    (r,) = a.sizes.values()
    assert (r.region, r.size, r.samples, r.measured, r.live, r.touched_bytes, r.never_touched) == (
        "solve/[MPI]", 3000, 8, 8, 2, 18000, 2)
    assert [(x["rank"], x["touched_bytes"], x["read_before_written_blocks"]) for x in a.ranks] == [
        (1, 22500, 1), (0, 22500, 0)]
    too_many = payload("JOB_ACCESS_SIZES", count=1, rows=[dict(row, measured=5)])
    for bad, why in ((chunk("JOB_ACCESS", summary) + chunk("JOB_ACCESS_SIZES", too_many),
                      "5 measured of 4 samples"),
                     (chunk("JOB_ACCESS_RANKS", ranks),
                      "JOB_ACCESS_RANKS chunk at byte .* before JOB_ACCESS")):
        path.write_bytes(head + whole + bad)
        with pytest.raises(HeapscopeError, match=f"malformed job file: .*{why}"):
            read_job_file(path)
    # in the writer's order, once each: what comes out of place is damage, said, and
    # the file is read up to it
    for bad, kept, what in ((access + command, True, "JOB_COMMAND"),
                            (chunk("JOB_ACCESS", summary) + access, True, "JOB_ACCESS")):
        path.write_bytes(head + whole + bad)
        j = read_job_file(path)
        assert (j.access is not None, j.cmdline) == (kept, None)
        assert f"{what} chunk at byte" in j.warnings[0] and "out of place" in j.warnings[0]


def test_job_peak_stacks(tmp_path):
    """JOB_PEAK_STACKS reads back type by type, its frames as (module, offset) placed in
    made-up module spans the symbolizer reads as a rank file's; a type naming a region or
    a module the chunk does not list is a one-line error."""
    from heapscope.profile.job_file import read_job_file
    head = header(start_real_ns=5)
    job = payload("JOB", ranks=4, hosts=0, summarized=0, reserved=0, summary_ns=1, reduce_ns=2,
                  job_id="9", per_rank="", recorder_version="0.1.0", exe="/apps/sim")

    def peaks(types, modules=2):
        return payload("JOB_PEAK_STACKS", ranks_tracked=3, per_rank=8, missing_bound=0,
                       paths=[dict(path="(none)"), dict(path="solve")],
                       modules=[dict(path="/apps/sim", build_id=bytes([0xab, 0x01])),
                                dict(path="/lib/libc.so.6", build_id=b"")][:modules],
                       types=types)
    mesh = dict(region=1, ranks=3, max_rank=2, size_min=100, size_max=300, blocks=3, bytes=600,
                bytes_max=300, frame_modules=(0, 0, 1), frame_offsets=(0x11db, 0x142a, 0x2724a))
    nostack = dict(region=0, ranks=1, max_rank=0, size_min=64, size_max=64, blocks=2, bytes=128,
                   bytes_max=128, frame_modules=(), frame_offsets=())
    path = tmp_path / "heapscope.9.job.hsj"
    whole = (chunk("JOB_REGIONS", payload("JOB_REGIONS", count=0, regions=[]))
             + chunk("JOB_HOSTS", payload("JOB_HOSTS", count=0, hosts=[])))
    path.write_bytes(head + chunk("JOB", job) + whole + chunk("JOB_PEAK_STACKS", peaks([mesh, nostack])))
    ps = read_job_file(path).peak_stacks
    assert (ps.ranks_tracked, ps.per_rank, ps.missing_bound) == (3, 8, 0)
    assert ps.modules == [("/apps/sim", "ab01"), ("/lib/libc.so.6", "")]
    t, u = ps.types
    assert (t.region, t.depth, t.ranks, t.max_rank, t.size_min, t.size_max, t.blocks, t.bytes,
            t.bytes_max) == ("solve", 3, 3, 2, 100, 300, 3, 600, 300)
    assert t.frames == ((0, 0x11db), (0, 0x142a), (1, 0x2724a))
    assert (u.region, u.depth, u.frames, u.bytes) == ("(none)", 0, (), 128)
    mods = ps.symbol_modules()
    for m, o in t.frames:    # the symbolizer's file offset: address - 1 - bias
        a = ps.address((m, o))
        assert mods[m].contains(a - 1) and a - 1 - mods[m].bias == o - 1
    for bad, why in ((dict(mesh, region=2), "region 2 of 2"),
                     (dict(mesh, frame_modules=(0, 0, 2)), "module past the 2 listed")):
        path.write_bytes(head + chunk("JOB", job) + whole + chunk("JOB_PEAK_STACKS", peaks([bad])))
        with pytest.raises(HeapscopeError, match=why):
            read_job_file(path)


def test_mpi_library_and_job_command(tmp_path):
    """MPI_LIBRARY (a stream chunk of a rank's profile) and the job file's JOB_MPI_LIBRARY
    and JOB_COMMAND read back: the library's text whole, its name and release read from
    it; a payload longer than its layout is a one-line error; out of the writer's order,
    damage that is said."""
    from heapscope.profile.job_file import read_job_file
    from heapscope.profile.mpi_library import of_profile
    mpich = "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 2022\nMPICH Device:\tch4:ucx"
    b = ProfileBuilder()
    b.add("MPI_LIBRARY", version=3, subversion=1, text=mpich)
    b.snapshot(sizes=[(0, 8, 1)])
    lib = of_profile(read_profile(b.write(tmp_path / "r.hsp")))
    assert (lib.text, lib.version, lib.subversion) == (mpich, 3, 1)
    assert (lib.name, lib.release, lib.label) == ("MPICH", "4.0.2", "MPICH 4.0.2")
    head = header(start_real_ns=5)
    ompi = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022"
    job = payload("JOB", ranks=2, hosts=0, summarized=0, reserved=0, summary_ns=1, reduce_ns=2,
                  job_id="9", per_rank="", recorder_version="0.1.0", exe="/apps/sim")
    whole = chunk("JOB", job) + chunk("JOB_REGIONS", payload("JOB_REGIONS", count=0, regions=[])) \
        + chunk("JOB_HOSTS", payload("JOB_HOSTS", count=0, hosts=[]))
    library = chunk("JOB_MPI_LIBRARY", payload("JOB_MPI_LIBRARY", version=3, subversion=1, text=ompi))
    command = chunk("JOB_COMMAND", payload("JOB_COMMAND", cmdline="/apps/sim\0-in\0a b"))
    path = tmp_path / "heapscope.9.job.hsj"
    path.write_bytes(head + whole + library + command)
    j = read_job_file(path)
    assert j.mpi_library.label == "Open MPI 4.1.4" and j.mpi_library.text == ompi
    assert j.cmdline == ["/apps/sim", "-in", "a b"]
    older = tmp_path / "heapscope.8.job.hsj"
    older.write_bytes(head + whole)
    assert (read_job_file(older).mpi_library, read_job_file(older).cmdline) == (None, None)
    path.write_bytes(head + whole + chunk("JOB_COMMAND", payload("JOB_COMMAND", cmdline="x") + b"\0"))
    with pytest.raises(HeapscopeError, match="malformed job file"):
        read_job_file(path)
    # in the writer's order, once each: a library after the command is damage, said
    path.write_bytes(head + whole + command + library)
    j = read_job_file(path)
    assert j.mpi_library is None and "JOB_MPI_LIBRARY chunk" in j.warnings[0]


def test_every_chunk_type_has_a_test_here():
    """A chunk type added to the table needs its reader test in this file."""
    tested = {"PROCESS", "SETTINGS", "SNAPSHOT_BEGIN", "SNAPSHOT_END", "MODULES", "REGIONS",
              "SIZE_COUNTS", "API_COUNTS", "STACK_TYPES", "TRACK_SUMMARY", "TRACK_TYPES",
              "TRACK_UNTRACKED", "TRACE_START", "TRACE_EVENTS", "TIMELINE", "TIMELINE_REGIONS",
              "HEAP_PEAK", "SAMPLING", "ENDING", "FAILED_ALLOCS", "PROCESS_END", "ACCESS",
              "ACCESS_TYPES", "JOB", "JOB_REGIONS", "JOB_SIZE_COUNTS", "JOB_API_COUNTS", "JOB_RANKS",
              "JOB_HOSTS", "JOB_PEAK_STACKS", "TIMELINE_RECORDER", "JOB_RECORDER", "MPI_LIBRARY",
              "JOB_MPI_LIBRARY", "JOB_COMMAND", "JOB_ACCESS", "JOB_ACCESS_SIZES", "JOB_ACCESS_RANKS"}
    assert set(ALL_CHUNKS) == tested


def test_failed_allocs(tmp_path):
    """Failed calls per region, API and size (None: past the recorder's table), added up
    over chunks; an API id the reader does not know is an error, not a row left out."""
    rows = [dict(region=1, api=API["malloc"], size=2 ** 64 - 1, calls=2, size_known=1),
            dict(region=0, api=API["posix_memalign"], size=64, calls=1, size_known=1),
            dict(region=1, api=API["calloc"], size=0, calls=5, size_known=0)]
    b = ProfileBuilder()
    b.snapshot(regions=[(1, 0, "solve")], sizes=[(1, 8, 3)],
               extra=[("FAILED_ALLOCS", payload("FAILED_ALLOCS", rows=rows)),
                      ("FAILED_ALLOCS", payload("FAILED_ALLOCS", rows=rows[:1]))])
    p = read_profile(b.write(tmp_path / "f.hsp"))
    assert p.failed_allocs == {("solve", "malloc", 2 ** 64 - 1): 4, ("(none)", "posix_memalign", 64): 1,
                               ("solve", "calloc", None): 5}
    assert p.size_counts == {("solve", 8): 3} and not p.extra_chunks
    bad = ProfileBuilder()
    bad.snapshot(extra=[("FAILED_ALLOCS", payload("FAILED_ALLOCS", rows=[dict(rows[0], api=99)]))])
    with pytest.raises(HeapscopeError, match=r"malformed FAILED_ALLOCS chunk at byte \d+: unknown API id 99"):
        read_profile(bad.write(tmp_path / "bad.hsp"))


# ---- the C writer ----

def decoded_whole(path):
    """The names of the chunk types in the file, each chunk checked: a type the table
    knows, decoded with no byte left over, encoded back to the very same bytes."""
    frame = framing.parse(path.read_bytes(), str(path))
    assert frame.truncated_at is None
    seen = set()
    for c in frame.chunks:
        assert c.type in fmt.CHUNK_NAMES, f"chunk type {c.type} at byte {c.offset} is not in the table"
        codec = fmt.CODECS[c.type]
        record = codec.decode(c.payload, whole=True)
        assert codec.encode(record) == bytes(c.payload), fmt.chunk_name(c.type)
        seen.add(fmt.chunk_name(c.type))
    return seen


def test_recorder_output_decodes_whole(heapscope, build, tmp_path):
    """tl_regions with every mode on (and once with sampled stacks, which go with
    neither exact stacks nor tracking): every chunk type, each decoding whole."""
    exe = build("tl_regions.c", "-DHEAPSCOPE_WEAK")
    heapscope("record", "-o", tmp_path, "--track", "--trace", "--sizes", "all",
              "--timeline-interval", "20ms", "--timeline-heap", "on", "--", exe, 30)
    (path,) = tmp_path.glob("*.hsp")
    seen = decoded_whole(path)
    heapscope("record", "-o", tmp_path / "sampled", "--sample-bytes", "64", "--access", "--",
              exe, 30)
    (sampled,) = (tmp_path / "sampled").glob("*.hsp")
    assert {"SAMPLING", "ACCESS", "ACCESS_TYPES"} <= decoded_whole(sampled)
    # ENDING: only a crash, another fatal signal or MPI_Abort writes it (decoded whole in
    # test_crash_snapshot.py);
    # FAILED_ALLOCS only when a call fails: tests/format/test_failed_allocs.py;
    # JOB*: only the job file (decoded whole in tests/mpi/test_job_file.py); MPI_LIBRARY
    # only under the MPI layer (tests/mpi/test_scaling.py)
    assert seen | {"SAMPLING", "ACCESS", "ACCESS_TYPES"} == {c for c in ALL_CHUNKS
                                    if c not in ("ENDING", "FAILED_ALLOCS", "MPI_LIBRARY")
                                   and not c.startswith("JOB")}
    p = read_profile(path)
    assert p.tracking.source == "track" and p.timeline.samples
    assert ("hold", 1 << 20) in p.size_counts
    assert p.complete and p.warnings == []


def test_recorder_snapshots_among_stream_chunks(heapscope, build, tmp_path):
    """Snapshots written while the timeline sampler and the trace writer append their
    chunks: each SNAPSHOT_END's types_crc (filled in as the writer appends it) vouches
    for every chunk before it, so the reader takes the last one, unflagged."""
    exe = build("fmt_sizes.c", "-DHEAPSCOPE_WEAK")
    heapscope("record", "-o", tmp_path, "--trace", "--timeline-interval", "1ms", "--", exe,
              "2000", "dumps")
    (path,) = tmp_path.glob("*.hsp")
    frame = framing.parse(path.read_bytes(), str(path))
    kinds = [c.type for c in frame.chunks]
    assert kinds.count(fmt.CHUNK_SNAPSHOT_END) == 21
    between = kinds[kinds.index(fmt.CHUNK_SNAPSHOT_END):]
    assert fmt.TIMELINE_SAMPLES in between and fmt.TRACE_EVENTS in between
    p = read_profile(path)
    assert (p.snapshot_seq, p.snapshot_reason, p.complete, p.warnings) == (20, "exit", True, [])
    assert sum(n for (_r, s), n in p.size_counts.items() if 1000 <= s < 3000) == 2000


def test_trace_of_a_file_with_a_longer_header(tmp_path):
    """The trace is scanned from header_size, not from 32 (the rule a later version with
    a longer header relies on; the trace reader once started at 32 whatever the header said)."""
    b = ProfileBuilder()
    b.add("TRACE_START", version=1, temporary_max_between=0, temporary_max_ns=0, start_mono_ns=0)
    raw = trace_events([("alloc", 1, 10, 0x1000, 40, 0, 0, 0), ("free", 2, 20, 0x1000)])
    b.add("TRACE_EVENTS", thread=0, events=2, first_seq=1, last_seq=2, codec=fmt.CODEC_NONE,
          raw_len=len(raw), data=raw)
    b.snapshot(sizes=[(0, 40, 1)])
    data = b.data()
    longer = header(header_size=fmt.HEADER_SIZE + 8) + b"\xff" * 8 + data[fmt.HEADER_SIZE:]
    t = read_profile(b.write(tmp_path / "h.hsp", longer)).tracking
    (s,) = t.stacks
    assert (s.size, s.life.allocs, s.life.frees, s.life.temporaries) == (40, 1, 1, 1)
