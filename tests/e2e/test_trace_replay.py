"""Event trace mode (record --trace): the events streamed into the file, replayed
into the same figures tracking mode computes in the recorder."""
import os
import struct
import zlib
from pathlib import Path

import pytest

from heapscope.native import program
from heapscope.profile import read_profile
from heapscope.profile import trace
from helpers.preloaded import sigterm_when_ready
from helpers.profile_builder import reframe


def profiles(out):
    return [read_profile(p) for p in sorted(out.glob("heapscope.*.hsp"))]


def figures(profile):
    """(region, size, has stack) -> the lifetimes that do not depend on timing."""
    out = {}
    for s in profile.tracking.stacks:
        key = (s.region, s.size, bool(s.frames))
        l = s.life
        row = (l.allocs, l.frees, l.temporaries, l.between_hist, l.live_at_peak,
               l.live_at_peak_bytes, l.live_at_end, l.live_at_end_bytes)
        assert key not in out
        out[key] = row
        assert sum(l.time_hist) == l.frees
    return out


def recode(src, dst, codec, pack):
    """Copy profile src to dst with each raw TRACE_EVENTS chunk's events packed by
    pack and labelled codec: files of a codec the recorder no longer writes."""
    head = struct.Struct("<IIQQIIQ")

    def change(ctype, payload):
        if ctype != trace.TRACE_EVENTS:
            return payload
        fields = list(head.unpack_from(payload))
        assert fields[4] == 0
        fields[4] = codec
        return head.pack(*fields) + pack(payload[head.size:])
    dst.write_bytes(reframe(src.read_bytes(), change))


def deflate(data):
    z = zlib.compressobj(1, zlib.DEFLATED, -15)
    return z.compress(data) + z.flush()


def summary(profile):
    t = profile.tracking
    return (t.temporary_max_between, t.peak_bytes, t.end_bytes, t.untracked, t.extra)


def test_trace_and_track_agree_on_known_lifetimes(heapscope, build, tmp_path):
    exe = build("trk_lifetimes.c", "-pthread")
    heapscope("record", "-o", tmp_path / "trace", "--trace", "--sizes", "200", "--", exe)
    heapscope("record", "-o", tmp_path / "track", "--track", "--sizes", "200", "--", exe)
    [traced] = profiles(tmp_path / "trace")
    [tracked] = profiles(tmp_path / "track")
    assert traced.tracking.source == "trace" and tracked.tracking.source == "track"
    assert figures(traced) == figures(tracked)
    assert summary(traced) == summary(tracked)
    assert traced.tracking.peak_bytes == 8000
    leak = [s for s in traced.tracking.stacks if s.size == 200]
    assert len(leak) == 1 and leak[0].frames and leak[0].life.live_at_end == 3
    # the stack type is defined in the stream: frames as long as the tracked ones
    [tracked_leak] = [s for s in tracked.tracking.stacks if s.size == 200]
    assert len(leak[0].frames) == len(tracked_leak.frames)


def test_trace_and_track_agree_on_the_churn_workload(heapscope, tmp_path):
    """~170,000 allocations from C++ containers: the replayed trace, tracking mode and
    a counts-only run agree (the workload is deterministic)."""
    churn = program("hs-wl-cxx-churn")
    args = ["--temporary-between", "2", "--", churn, "--ops", "20000", "--working-set", "300"]
    heapscope("record", "-o", tmp_path / "trace", "--trace", *args)
    # per size, as the trace (without --sizes) has them: tracking without sampled stacks
    heapscope("record", "-o", tmp_path / "track", "--track", "--sample-bytes", "off", *args)
    heapscope("record", "-o", tmp_path / "counts", *args[2:])
    [traced] = profiles(tmp_path / "trace")
    [tracked] = profiles(tmp_path / "track")
    [counts] = profiles(tmp_path / "counts")
    assert figures(traced) == figures(tracked)
    assert summary(traced) == summary(tracked)
    assert traced.tracking.temporary_max_between == 2
    allocs = {}
    for s in traced.tracking.stacks:
        allocs[s.size] = allocs.get(s.size, 0) + s.life.allocs
    assert allocs == {size: n for (_, size), n in counts.size_counts.items()}
    assert sum(allocs.values()) > 150_000
    assert sum(s.life.temporaries for s in traced.tracking.stacks) > 0


@pytest.mark.parametrize("compress, codec", [(None, 2), ("1", 2), ("0", 0)])
def test_events_are_chunks_of_each_thread(heapscope, build, tmp_path, compress, codec):
    """zstd chunks by default, raw with HEAPSCOPE_TRACE_COMPRESS=0."""
    exe = build("trk_lifetimes.c", "-pthread")
    env = {"HEAPSCOPE_TRACE_COMPRESS": compress} if compress else None
    heapscope("record", "-o", tmp_path, "--trace", "--", exe, env=env)
    [path] = tmp_path.glob("heapscope.*.hsp")
    start, chunks = trace.scan(str(path))
    assert start is not None and start[0] == 1
    # a chunk that zstd would not make smaller (a few events) stays raw
    assert {c.codec for c in chunks if c.raw_len >= 1024} == {codec}, [(c.codec, c.raw_len) for c in chunks]
    assert len({c.thread for c in chunks}) == 2      # main thread and the freeing one
    for c in chunks:
        assert c.first_seq <= c.last_seq
    # merged by number: each number once, in order (threads' numbers interleave)
    stacks = {}
    merged = list(trace.events(str(path), chunks, stacks))
    numbers = [e[0] for e in merged]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    assert sum(c.events for c in chunks) == len(merged)
    kinds = [e[1] for e in merged]
    p = read_profile(path)
    assert kinds.count(trace.ALLOC) == sum(p.size_counts.values())


def test_every_codec_replays_like_raw(heapscope, tmp_path):
    """zstd (the default: every chunk, the writer thread's reusing one context, and
    the exit's) and deflate (older files: recoded here) replay into the same
    figures as raw chunks."""
    args = ["--", program("hs-wl-cxx-churn"), "--ops", "20000", "--working-set", "300"]
    heapscope("record", "-o", tmp_path / "raw", "--trace", *args,
              env={"HEAPSCOPE_TRACE_COMPRESS": "0"})
    heapscope("record", "-o", tmp_path / "zstd", "--trace", *args)
    [raw] = profiles(tmp_path / "raw")
    [packed] = profiles(tmp_path / "zstd")
    _, chunks = trace.scan(packed.path)
    # every chunk of some size is zstd; one of a few events that zstd would not make
    # smaller stays raw (a writer's flush on a loaded machine makes such chunks)
    assert {c.codec for c in chunks if c.raw_len >= 1024} == {2}, [(c.codec, c.raw_len) for c in chunks]
    assert {c.codec for c in chunks} <= {0, 2} and sum(c.codec == 2 for c in chunks) > 4
    assert sum(c.length for c in chunks) < sum(c.length for c in trace.scan(raw.path)[1])
    (tmp_path / "deflate").mkdir()
    recode(Path(raw.path), tmp_path / "deflate" / "heapscope.old.1.hsp", 1, deflate)
    [old] = profiles(tmp_path / "deflate")
    assert {c.codec for c in trace.scan(old.path)[1]} == {1}
    for other in (packed, old):
        assert figures(raw) == figures(other)
        assert summary(raw) == summary(other)


def test_forked_child_has_its_own_trace(heapscope, build, tmp_path):
    exe = build("trk_lifetimes.c", "-pthread")
    heapscope("record", "-o", tmp_path, "--trace", "--", exe, "fork")
    ps = profiles(tmp_path)
    [child] = [p for p in ps if any(p.ppid == q.pid for q in ps)]
    [parent] = [p for p in ps if p is not child]
    rows = {s.size: s.life for s in child.tracking.stacks}
    assert set(rows) == {88}
    assert (rows[88].allocs, rows[88].live_at_end) == (4, 4)
    prow = {s.size: s.life for s in parent.tracking.stacks}
    assert 88 not in prow and (prow[96].allocs, prow[96].frees) == (4, 4)


@pytest.mark.parametrize("codec", [2, 1])
def test_corrupt_event_chunk_is_one_clear_error(heapscope, build, tmp_path, codec):
    exe = build("trk_lifetimes.c", "-pthread")
    env = {"HEAPSCOPE_TRACE_COMPRESS": "0"} if codec == 1 else None
    heapscope("record", "-o", tmp_path, "--trace", "--", exe, "many", env=env)
    [path] = tmp_path.glob("heapscope.*.hsp")
    if codec == 1:
        recode(path, path, 1, deflate)
    _, [chunk] = trace.scan(str(path))
    assert chunk.codec == codec
    data = bytearray(path.read_bytes())
    if codec == 2:
        data[chunk.offset + 40] ^= 0xFF               # the zstd frame's magic number
    else:
        data[chunk.offset + chunk.length - 1] ^= 0xFF     # last byte of its payload
    # keep the file's own framing valid: the reader checks crcs first
    path.write_bytes(reframe(bytes(data)))
    res = heapscope("lifetimes", path, check=False)
    assert res.returncode != 0
    assert len(res.stderr.strip().splitlines()) == 1 and "TRACE_EVENTS" in res.stderr


def test_sigterm_writes_every_event_before_the_snapshot(build, native, tmp_path):
    """A signal handler's snapshot takes the buffered events too (the handler writes
    them raw unless the writer thread picks them up first: either way, all of them)."""
    exe = build("trk_lifetimes.c", "-pthread")
    sigterm_when_ready(native, exe, tmp_path, "wait", HEAPSCOPE_TRACE="1")
    [p] = profiles(tmp_path)
    assert p.snapshot_reason == "sigterm"
    rows = {s.size: s.life for s in p.tracking.stacks}
    assert (rows[40].allocs, rows[40].frees, rows[40].temporaries) == (1000, 1000, 1000)
    assert (rows[77].allocs, rows[77].live_at_end) == (1, 1)
    _, chunks = trace.scan(p.path)
    assert sum(c.events for c in chunks) == 2001


def full_figures(profile):
    """Every figure of the replay, time histograms too: (region, size, frames) -> life."""
    t = profile.tracking
    return ({(s.region, s.size, s.frames): s.life for s in t.stacks},
            (t.peak_bytes, t.peak_mono_ns, t.end_bytes, t.extra))


@pytest.mark.parametrize("what", ["threads", "churn"])
def test_compiled_replay_equals_the_python_reference(heapscope, build, tmp_path, monkeypatch, what):
    """The replay in C (libheapscope_replay.so) gives every figure the Python replay
    gives, on two threads' interleaved streams and on ~170,000 allocations."""
    from heapscope.profile import replay_native
    assert replay_native.available()
    if what == "threads":
        args = ["--sizes", "200", "--", build("trk_lifetimes.c", "-pthread")]
    else:
        args = ["--sizes", "all", "--temporary-between", "2", "--", program("hs-wl-cxx-churn"),
                "--ops", "20000", "--working-set", "300"]
    heapscope("record", "-o", tmp_path, "--trace", "--no-symbolize", *args)
    [path] = tmp_path.glob("heapscope.*.hsp")
    compiled = full_figures(read_profile(path))
    monkeypatch.setenv("HEAPSCOPE_REPLAY", "python")
    reference = full_figures(read_profile(path))
    assert compiled == reference
    assert sum(life.allocs for life in compiled[0].values()) > (150_000 if what == "churn" else 600)


def test_reports_without_tracking_never_replay(heapscope, tmp_path, monkeypatch, capsys):
    """report, stacks, callgraph, diff, export and record's symbol step read the
    snapshot of a trace profile: the replay is never started."""
    from heapscope import cli
    from heapscope.symbolize.warm import warm
    args = ["--", program("hs-wl-cxx-churn"), "--ops", "5000", "--working-set", "100"]
    heapscope("record", "-o", tmp_path, "--trace", "--sizes", "all", "--no-symbolize", *args)
    [path] = tmp_path.glob("heapscope.*.hsp")

    def forbidden(profile):
        raise AssertionError(f"replayed {profile.path}")

    monkeypatch.setattr(trace, "replay", forbidden)
    for argv in (["report", path], ["stacks", path, "--size", "all"],
                 ["callgraph", path, "--size", "all", "--format", "json"], ["diff", path, path],
                 ["export", path, "--format", "collapsed", "-o", tmp_path / "out.txt"]):
        assert cli.main([str(a) for a in argv]) == 0, (argv, capsys.readouterr().err)
    assert warm([str(path)]).addresses > 10
    assert read_profile(path).tracking_deferred
    # and a tracking report does replay
    assert cli.main(["lifetimes", str(path)]) != 0
    assert "replayed" in capsys.readouterr().err


def _changed_in_place(path):
    """One byte of the command line in the PROCESS chunk changed, the chunk's crcs redone,
    the file's size and mtime kept: another content under the same identity."""
    from heapscope.profile import format as fmt
    from helpers.profile_builder import chunk_crc, chunks_of
    data = bytearray(path.read_bytes())
    st = path.stat()
    ctype, at, body = next(c for c in chunks_of(bytes(data)) if c[0] == fmt.CHUNK_PROCESS)
    head = fmt.CHUNK_HEADER_SIZE
    data[at + head + len(body) - 1] ^= 0x01
    payload = bytes(data[at + head:at + head + len(body)])
    struct.pack_into("<IIQ", data, at, ctype, chunk_crc(ctype, payload), len(payload))
    struct.pack_into("<II", data, at + 16, zlib.crc32(bytes(data[at:at + 16])), 0)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns


def test_replay_is_kept_by_the_files_content(heapscope, build, tmp_path, monkeypatch):
    """The second tracking read of a trace profile takes the replay kept in the cache
    directory (nothing is written beside the profile unless asked); a file changed in
    place to the same size and mtime is replayed again (its size, mtime and inode were
    the key: the stale replay was trusted); the same bytes copied elsewhere keep it;
    HEAPSCOPE_REPLAY_CACHE=beside keeps it beside the profile, =0 keeps none."""
    from heapscope.profile import replay_native
    cache = tmp_path / "cache"
    monkeypatch.setenv("HEAPSCOPE_CACHE_DIR", str(cache))
    exe = build("trk_lifetimes.c", "-pthread")
    run = tmp_path / "run"
    heapscope("record", "-o", run, "--trace", "--sizes", "200", "--no-symbolize", "--", exe)
    [path] = run.glob("heapscope.*.hsp")
    first = full_figures(read_profile(path))
    assert [p.name for p in run.iterdir()] == [path.name]          # nothing beside it
    [kept] = (cache / "replay").glob("*.json")

    def forbidden(*args):
        raise AssertionError("replayed again")

    real = replay_native.replay_chunks
    monkeypatch.setattr(replay_native, "replay_chunks", forbidden)
    assert full_figures(read_profile(path)) == first
    copy = tmp_path / "copy.hsp"
    copy.write_bytes(path.read_bytes())
    assert full_figures(read_profile(copy)) == first               # the same content
    _changed_in_place(path)
    with pytest.raises(AssertionError, match="replayed again"):
        read_profile(path).tracking
    monkeypatch.setattr(replay_native, "replay_chunks", real)
    assert full_figures(read_profile(path)) == first               # (only the command line changed)
    assert len(list((cache / "replay").glob("*.json"))) == 2
    monkeypatch.setenv("HEAPSCOPE_REPLAY_CACHE", "beside")
    full_figures(read_profile(path))
    [beside] = run.glob(".heapscope.*.replay")
    assert beside.name == "." + path.name[:-len(".hsp")] + ".replay"
    monkeypatch.setattr(replay_native, "replay_chunks", forbidden)
    assert full_figures(read_profile(path)) == first
    monkeypatch.setattr(replay_native, "replay_chunks", real)
    monkeypatch.setenv("HEAPSCOPE_REPLAY_CACHE", "0")
    for f in [beside, *(cache / "replay").glob("*.json")]:
        f.unlink()
    assert full_figures(read_profile(path)) == first
    assert not list(run.glob(".heapscope.*.replay")) and not list((cache / "replay").glob("*.json"))
