"""The job file's stack types at the ranks' heap peaks (JOB_PEAK_STACKS), reduced inside
the job at MPI_Finalize: tests/programs/mpi_peak_stacks.c on 4 ranks with record --track,
each rank holding blocks of rank-dependent sizes from 10 distinct call paths at its peak.

Checked twice: against each rank's own file at MPI_Finalize (its tracking's blocks live at
its peak, grouped as the recorder groups them: region and call path, frames as module and
offset; its 8 largest; then merged over the ranks), and against the program's known
sizes with the frames symbolized (function names)."""
import json
import os
import struct
import subprocess
import sys
from types import SimpleNamespace

import pytest

from conftest import MPI_FAMILIES, compile_program
from heapscope.analysis.job_peak_stacks import NO_TRACK, document
from heapscope.profile.job_peak_stacks import decode as decode_peak_stacks
from heapscope.render import job_peak_stacks_text
from heapscope.profile import format as fmt
from heapscope.profile.job_file import read_job_file
from helpers.rank_files import at_finalize

M = 1000000
PER_RANK, TOP = 8, 20


@pytest.fixture(scope="module", params=list(MPI_FAMILIES))
def run(request, tmp_path_factory):
    mpi = MPI_FAMILIES[request.param]
    tmp = tmp_path_factory.mktemp(f"peaks-{request.param}")
    program = mpi.compile("mpi_peak_stacks.c", tmp / "mpi_peak_stacks")
    out = tmp / "out"
    res = subprocess.run([sys.executable, "-m", "heapscope", "record", "--track", "--sizes",
                          "1000-100000000", "--per-rank", "all", "-o", out, "--",
                          *mpi.mpirun(4), program], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    (job,) = out.glob("heapscope.*.job.hsj")
    ranks = sorted(out.glob("heapscope.*.r*.hsp"))
    assert len(ranks) == 4
    return job, ranks, tmp


def _module_offset(p, address):
    for m in p.modules:
        if m.contains(address - 1):
            return (m.path, m.build_id, address - m.bias)
    return (None, None, address)


def _rank_types(p):
    """A rank's 8 largest types at its peak, from its own file's tracking."""
    types = {}
    for s in p.tracking.stacks:
        if not s.life.live_at_peak_bytes:
            continue
        key = (s.region, tuple(_module_offset(p, a) for a in s.frames)) if s.frames \
            else (s.region, s.size)
        t = types.setdefault(key, dict(blocks=0, bytes=0, sizes=set()))
        t["blocks"] += s.life.live_at_peak
        t["bytes"] += s.life.live_at_peak_bytes
        t["sizes"].add(s.size)
    order = sorted(types.items(), key=lambda kv: (-kv[1]["bytes"], min(kv[1]["sizes"])))
    return order[:PER_RANK]


def _expected(profiles):
    merged = {}
    for p in profiles:
        for key, t in _rank_types(p):
            m = merged.setdefault(key, dict(ranks=0, blocks=0, bytes=0, bytes_max=-1, max_rank=-1,
                                            sizes=set()))
            m["ranks"] += 1
            m["blocks"] += t["blocks"]
            m["bytes"] += t["bytes"]
            m["sizes"] |= t["sizes"]
            if t["bytes"] > m["bytes_max"] or (t["bytes"] == m["bytes_max"] and p.rank < m["max_rank"]):
                m["bytes_max"], m["max_rank"] = t["bytes"], p.rank
    order = sorted(merged.items(), key=lambda kv: (-kv[1]["bytes"], -kv[1]["ranks"],
                                                  kv[1]["max_rank"], min(kv[1]["sizes"])))
    return [(key, (m["ranks"], m["blocks"], m["bytes"], m["bytes_max"], m["max_rank"],
                   min(m["sizes"]), max(m["sizes"]))) for key, m in order[:TOP]]


def _job_types(ps):
    got = []
    for t in ps.types:
        frames = tuple((ps.modules[m][0], ps.modules[m][1], o) if m != fmt.NO_MODULE else (None, None, o)
                       for m, o in t.frames)
        key = (t.region, frames) if t.depth else (t.region, t.size_min)
        got.append((key, (t.ranks, t.blocks, t.bytes, t.bytes_max, t.max_rank, t.size_min, t.size_max)))
    return got


def test_the_job_files_peak_types_equal_the_rank_files(run):
    job_path, rank_paths, tmp = run
    cuts = tmp / "cuts"
    cuts.mkdir(exist_ok=True)
    profiles = [at_finalize(f, cuts) for f in rank_paths]
    assert sorted(p.rank for p in profiles) == [0, 1, 2, 3]
    ps = read_job_file(job_path).peak_stacks
    assert (ps.ranks_tracked, ps.per_rank, ps.missing_bound) == (4, PER_RANK, 0)
    assert _job_types(ps) == _expected(profiles)


def test_track_alone_splits_each_size_among_its_sampled_paths(tmp_path, heapscope):
    """--track alone samples stacks: a rank's blocks at its peak are split among the paths
    of their size by the sampled ones, in the job file as in the rank files (whose reader
    splits them the same way), so a path's figure is all its blocks, not its samples."""
    mpi = MPI_FAMILIES["openmpi"]
    program = mpi.compile("mpi_peak_stacks.c", tmp_path / "mpi_peak_stacks")
    out = tmp_path / "out"
    # a mean of 2 MB: a block of 1-4 MB is sampled with probability 0.39-0.86, so some of
    # hold_halo's three blocks of a size on a rank are samples and some not
    res = subprocess.run([sys.executable, "-m", "heapscope", "record", "--track", "--sample-bytes",
                          "2000000", "--per-rank", "all", "-o", out, "--", *mpi.mpirun(4), program],
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, HEAPSCOPE_SAMPLE_SEED="5"))
    assert res.returncode == 0, res.stderr
    (job_path,) = out.glob("heapscope.*.job.hsj")
    (tmp_path / "cuts").mkdir()
    profiles = [at_finalize(f, tmp_path / "cuts") for f in out.glob("heapscope.*.r*.hsp")]
    assert all(p.settings["sample_bytes"] == 2000000 for p in profiles)
    # the split is at work: a path's estimate is more blocks than its samples somewhere
    assert any(s.sampled is not None and s.sampled.live_at_peak < s.life.live_at_peak
               for p in profiles for s in p.tracking.stacks)
    ps = read_job_file(job_path).peak_stacks
    assert _job_types(ps) == _expected(profiles)


def test_track_without_stacks_gives_types_per_region_and_size(tmp_path, heapscope):
    """--track --sample-bytes off: no call paths, a type is a (region, size); the same
    figures as the rank files, and the report says the sizes were tracked without their
    stacks."""
    mpi = MPI_FAMILIES["openmpi"]
    program = mpi.compile("mpi_peak_stacks.c", tmp_path / "mpi_peak_stacks")
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "heapscope", "record", "--track", "--sample-bytes",
                          "off", "--per-rank", "all", "-o", out, "--", *mpi.mpirun(4), program],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    (job_path,) = out.glob("heapscope.*.job.hsj")
    (tmp_path / "cuts").mkdir()
    profiles = [at_finalize(f, tmp_path / "cuts") for f in out.glob("heapscope.*.r*.hsp")]
    ps = read_job_file(job_path).peak_stacks
    assert ps.ranks_tracked == 4 and all(t.depth == 0 and not t.frames for t in ps.types)
    assert _job_types(ps) == _expected(profiles)
    # rank 3's mesh (16 M) and halo (3 x 1 M, in pcontrol-1); 20 M on rank 0 alone
    by_key = {key: figures for key, figures in _job_types(ps)}
    assert by_key[("(none)", 16 * M)][:5] == (1, 1, 16 * M, 16 * M, 3)
    assert by_key[("pcontrol-1", M)][:5] == (1, 3, 3 * M, 3 * M, 3)
    assert by_key[("(none)", 20 * M)][:5] == (1, 1, 20 * M, 20 * M, 0)
    text = heapscope("report", *out.glob("heapscope.*.r*.hsp"), job_path).stdout
    assert "(no stack: this size was tracked without its stacks)" in text


def _known():
    """innermost function (nest: and how many nest frames) -> (region, ranks, blocks,
    bytes summed, bytes_max, max_rank), from the program's sizes."""
    out = {("hold_mesh", 0): ("(none)", 4, 4, 4 * M * (1 + 2 + 3 + 4), 16 * M, 3),
           ("hold_halo", 0): ("pcontrol-1", 4, 12, 3 * M * (4 + 3 + 2 + 1), 12 * M, 0),
           ("hold_spill", 0): ("(none)", 1, 1, 20 * M, 20 * M, 0),         # 1000 bytes elsewhere
           ("hold_odd", 0): ("(none)", 2, 2, 12 * M + 4000, 6 * M + 3000, 3),
           ("hold_even", 0): ("(none)", 1, 1, 3 * M // 2 + 2000, 3 * M // 2 + 2000, 2)}  # 9th on rank 0
    for d in range(1, 6):
        size = 2 * M + d * 100000
        out[("nest", d)] = ("(none)", 4, 4, 4 * size + 6000, size + 3000, 3)
    return out


def test_the_report_names_who_held_each_ranks_peak(run, heapscope):
    job_path, rank_paths, _ = run
    doc = json.loads(heapscope("report", *rank_paths, job_path, "--format", "json").stdout)
    ps = doc["job_file"]["peak_stacks"]
    assert (ps["ranks_tracked"], ps["ranks"], ps["exact"]) == (4, 4, True)
    seen = {}
    for t in ps["types"]:
        functions = [f["function"] for f in t["frames"]]
        assert t["recorded"] and "main" in functions
        key = (functions[0], functions.count("nest") if functions[0] == "nest" else 0)
        seen[key] = (t["region"], t["ranks"], t["blocks"], t["bytes"], t["bytes_max"], t["max_rank"])
    assert seen == _known()
    assert [t["bytes"] for t in ps["types"]] == sorted((t["bytes"] for t in ps["types"]), reverse=True)
    text = heapscope("report", *rank_paths, job_path).stdout
    assert "Who held the heap peak" in text and "hold_mesh @" in text
    assert "40,000,000 bytes on 4 ranks (most: 16,000,000 on r3)" in text


def test_without_track_the_report_says_how_to_get_them(tmp_path, heapscope):
    mpi = MPI_FAMILIES["openmpi"]
    program = mpi.compile("mpi_peak_stacks.c", tmp_path / "mpi_peak_stacks")
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "heapscope", "record", "--per-rank", "none",
                          "-o", out, "--", *mpi.mpirun(4), program],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    (job_path,) = out.glob("heapscope.*.job.hsj")
    ps = read_job_file(job_path).peak_stacks
    assert (ps.ranks_tracked, ps.types) == (0, [])
    doc = json.loads(heapscope("report", job_path, "--format", "json").stdout)
    assert doc["job_file"]["peak_stacks"] == {"absent": NO_TRACK}
    text = heapscope("report", job_path).stdout
    assert text.count(NO_TRACK) == 1 and "Who held the heap peak" in text


# ---- a parent's merge, without MPI (heapscope__job_merge) ----

def _part(types, ranks_tracked=1, paths=("(none)", "solve")):
    """A part with no counts, no access section and a peak section (job_summary.c: the
    section's length in the header's fourth word, its bytes at the end)."""
    from helpers.profile_builder import payload
    section = payload("JOB_PEAK_STACKS", ranks_tracked=ranks_tracked, per_rank=8, missing_bound=0,
                      paths=[dict(path=p) for p in paths],
                      modules=[dict(path="/apps/sim", build_id=b"\xab")], types=types)
    return struct.pack("<5I", 0, 0, 0, len(section), 0) + section


def _type(offset, nbytes, rank, ranks=1, region=0, size=0):
    return dict(region=region, ranks=ranks, max_rank=rank, size_min=size or nbytes,
                size_max=size or nbytes, blocks=1, bytes=nbytes, bytes_max=nbytes,
                frame_modules=(0, 0), frame_offsets=(offset, 0x500))


def _merge(native, tmp, a, b):
    exe = compile_program(native, "job_merge_parts.c", tmp / "job_merge_parts", "-ldl")
    (tmp / "a").write_bytes(a)
    (tmp / "b").write_bytes(b)
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libheapscope.so"),
               HEAPSCOPE_OUTPUT_DIR=str(tmp))
    res = subprocess.run([str(exe), tmp / "a", tmp / "b", tmp / "out"], env=env)
    assert res.returncode == 0
    merged = (tmp / "out").read_bytes()
    (n_regions, n_sizes, n_apis, peaks_len, access_len) = struct.unpack_from("<5I", merged)
    assert (n_regions, n_sizes, n_apis, access_len) == (0, 0, 0, 0)
    assert peaks_len == len(merged) - 20
    return decode_peak_stacks(merged[20:])


def test_a_merge_adds_equal_types_and_keeps_the_largest_of_equal_bytes(native, tmp_path):
    a = _part([_type(0x100, 5000, 0), _type(0x200, 700, 0, region=1)])
    b = _part([_type(0x100, 5000, 3, region=1), _type(0x100, 3000, 1, region=1),
               _type(0x300, 900, 2)], ranks_tracked=2, paths=("solve", "(none)"))
    ps = _merge(native, tmp_path, a, b)
    assert (ps.ranks_tracked, ps.missing_bound) == (3, 0)
    got = [(t.region, t.frames[0][1], t.ranks, t.bytes, t.bytes_max, t.max_rank) for t in ps.types]
    # b names its regions in another order; equal bytes on ranks 0 and 3: the lower rank
    assert got == [("(none)", 0x100, 3, 13000, 5000, 0), ("solve", 0x300, 1, 900, 900, 2),
                   ("solve", 0x200, 1, 700, 700, 0)]


def test_a_merge_past_the_kept_types_says_what_it_dropped(native, tmp_path):
    """200 distinct types from each child: the parent keeps the 256 largest and records
    the bytes of the largest one it dropped; the figures are then lower bounds."""
    a = _part([_type(0x1000 + 16 * i, 10000 + 2 * i, 0) for i in range(200)])
    b = _part([_type(0x9000 + 16 * i, 10001 + 2 * i, 1) for i in range(200)])
    ps = _merge(native, tmp_path, a, b)
    sizes = sorted([10000 + 2 * i for i in range(200)] + [10001 + 2 * i for i in range(200)],
                   reverse=True)
    assert [t.bytes for t in ps.types] == sizes[:256]
    assert ps.missing_bound == sizes[256]
    doc = document(SimpleNamespace(peak_stacks=ps, size=2, path="x.hsj"))
    assert doc["exact"] is False and doc["missing_bound"] == sizes[256] and len(doc["types"]) == 256
    assert "lower bounds" in "\n".join(job_peak_stacks_text.lines(doc))
