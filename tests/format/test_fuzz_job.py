"""Fuzzing the job file's reader as tests/format/test_fuzz.py fuzzes the profile's (in CI:
about 2,500 mutants, a few seconds): truncations every 3 bytes, random bit flips, crafted
chunks (types changed to other known types, lengths and counts changed: the rows' counts
and JOB's ranks, hosts and summarized, every crc redone), chunks written twice (the whole
file's, one chunk's), trailing bytes, and the header's write-failed flag. Each mutant is
either rejected with a one-line error (exit status 2), or read with every figure the
original's (only the peak stack types may be missing, then with a warning), a warning
whenever its bytes are not the original's; and the job report is built from it without
allocating in proportion to a count (a job size of 2^31 - 1 took 16 GB). A few mutants
go through `heapscope report` for the exit status, the single line and the memory."""
import random
import resource
import struct
import subprocess
import sys

import pytest

from heapscope.analysis import job as job_analysis
from heapscope.profile import format as fmt
from heapscope.profile.job_file import read_job_file
from helpers.mutants import HEAD, framing_mutants, outcomes, read_or_error, with_u32
from helpers.profile_builder import chunk, chunks_of, header, payload

JOB_TYPES = sorted(c.id for c in fmt.TABLE.chunks if c.name.startswith("JOB"))
RANKS = 6                       # MPI_COMM_WORLD: rank 4 has no row (it kept its own file)


def _row(rank, host):
    return dict(rank=rank, host=host, pid=300 + rank, reason=fmt.REASON_API, present=31 | 32,
                kept=int(rank == 0), alloc_app_blocks=10 + rank, alloc_mpi_blocks=5,
                alloc_app_bytes=1000 * (rank + 1), alloc_mpi_bytes=64, heap_peak=9000 + rank,
                heap_app_peak=8000 + rank, heap_mpi_peak=700, rss_peak=1 << 20, pss_peak=1 << 19,
                mpi_rss=4096, mpi_pss=2048)


def original() -> bytes:
    rows = [_row(r, r % 2) for r in (0, 1, 2, 3, 5)]
    hosts = [dict(name=name, ranks=sum(1 for r in rows if r["host"] == h), reserved=0,
                  rss_sum=0, rss_max=-1, pss_sum=0, pss_max=-1) for h, name in enumerate(("n1", "n2"))]
    peaks = payload("JOB_PEAK_STACKS", ranks_tracked=2, per_rank=8, missing_bound=0,
                    paths=[dict(path="(none)")], modules=[dict(path="/apps/sim", build_id=b"\x01")],
                    types=[dict(region=0, ranks=2, max_rank=1, size_min=64, size_max=64, blocks=4,
                                bytes=256, bytes_max=128, frame_modules=(0,), frame_offsets=(0x1234,))])
    parts = [("JOB", payload("JOB", ranks=RANKS, hosts=2, summarized=len(rows), reserved=0,
                             summary_ns=5, reduce_ns=7, job_id="42", per_rank="",
                             recorder_version="0.1.0", exe="/apps/sim")),
             ("JOB_REGIONS", payload("JOB_REGIONS", regions=[dict(path="(none)"), dict(path="[MPI]")])),
             ("JOB_SIZE_COUNTS", payload("JOB_SIZE_COUNTS", rows=[dict(region=0, reserved=0, size=24, count=9)])),
             ("JOB_SIZE_COUNTS", payload("JOB_SIZE_COUNTS", rows=[dict(region=1, reserved=0, size=8, count=3)])),
             ("JOB_API_COUNTS", payload("JOB_API_COUNTS", rows=[dict(region=0, api=0, calls=12)])),
             ("JOB_RANKS", payload("JOB_RANKS", ranks=rows[:3])),
             ("JOB_RANKS", payload("JOB_RANKS", ranks=rows[3:])),
             ("JOB_HOSTS", payload("JOB_HOSTS", hosts=hosts)),
             ("JOB_PEAK_STACKS", peaks)]
    return header() + b"".join(chunk(name, p) for name, p in parts)


def figures(j):
    """Every figure but the job's size, which nothing in the file can check beyond its
    rows (ranks without a row kept their own files): it is only read at least as large."""
    return (j.job_id, len(j.rows), j.regions, j.size_counts, j.api_counts,
            j.rows.tolist(), j.hosts, j.exe)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("job") / "heapscope.42.job.hsj"
    data = original()
    path.write_bytes(data)
    j = read_job_file(path)
    assert not getattr(j, "warnings", []) and j.peak_stacks is not None and len(j.rows) == 5
    return data, figures(j), j.peak_stacks


def mutants(data: bytes):
    rng = random.Random(20261127)
    yield from framing_mutants(data, JOB_TYPES + [fmt.CHUNK_SNAPSHOT_BEGIN, fmt.CHUNK_PROCESS],
                               seed=20261127, flips=1500)
    for ctype, at, body in chunks_of(data):
        counts = [0] if fmt.CODECS[ctype].fields[0].name == "count" else []
        if ctype == fmt.JOB:
            counts = [0, 4, 8]                                           # ranks, hosts, summarized
        for offset in counts:                                            # counts changed
            (n,) = struct.unpack_from("<I", body, offset)
            for value in {0, n - 1, n + 1, 2 * n + 1, 2 ** 31 - 1, 2 ** 32 - 1} - {n}:
                if value >= 0:
                    yield "count", with_u32(data, at, len(body), offset, value)
        end = at + HEAD + len(body)
        yield "twice", data[:end] + data[at:end] + data[end:]            # one chunk twice
    yield "twice", data + data[fmt.HEADER_SIZE:]                         # every chunk twice
    for tail in (b"\0" * 7, b"\0" * 24, bytes(rng.randrange(256) for _ in range(100)),
                 chunk("JOB_HOSTS", b"\0" * 4)):
        yield "tail", data + tail                                        # trailing bytes
    for flags in (fmt.HEADER_WRITE_FAILED, 2):
        yield "flag", header(flags=flags, write_errno=28, lost_at=99) + data[fmt.HEADER_SIZE:]


def check(path, data, reference) -> str:
    original_data, want, peaks = reference
    j = read_or_error(read_job_file, path, data)
    if j is None:
        return "error"
    assert figures(j) == want, "figures differ from the original's"
    assert j.size >= max(j.rows["rank"]) + 1
    assert j.peak_stacks == peaks or (j.peak_stacks is None and j.warnings)
    assert data == original_data or j.warnings or j.size != RANKS, \
        "a changed file read without a warning"
    job_analysis.build([], job=j)          # the report's figures: nothing in proportion to a count
    return "whole" if data == original_data else "warned"


def test_every_job_file_mutant_is_an_error_or_the_original_with_a_warning(tmp_path, reference):
    seen = outcomes(mutants(reference[0]), lambda path, mutant: check(path, mutant, reference),
                    tmp_path / "heapscope.42.job.hsj")
    for kind in ("cut", "flip", "type", "length", "count", "twice"):
        assert seen.get((kind, "error"), 0) > 0, (kind, seen)
    for kind in ("cut", "twice", "tail", "flag"):            # damage after a whole job, said
        assert seen.get((kind, "warned"), 0) > 0, (kind, seen)
    assert sum(seen.values()) > 2000


def _limited(megabytes):
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
    return limit


def test_cli_on_crafted_job_files(tmp_path, reference):
    """A job size of 2^31 - 1 (everything else consistent) is a job with that many ranks
    missing, reported in bounded memory; the chunks written twice and a flagged header
    are said; a row count that disagrees is one line, exit status 2."""
    data = reference[0]
    job_at, body = next((at, p) for t, at, p in chunks_of(data) if t == fmt.JOB)

    def crafted(change):
        buf = bytearray(data)
        change(buf)
        out = tmp_path / str(len(list(tmp_path.iterdir())))
        out.mkdir()
        (out / "heapscope.42.job.hsj").write_bytes(bytes(buf))
        return subprocess.run([sys.executable, "-m", "heapscope", "report", str(out)],
                              capture_output=True, text=True, timeout=120,
                              preexec_fn=_limited(1500))

    def huge(buf):
        buf[:] = with_u32(bytes(buf), job_at, len(body), 0, 2 ** 31 - 1)
    res = crafted(huge)
    assert res.returncode == 0, res.stderr
    assert "missing   ranks 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, ... and 2,147,483,630 more" \
        in res.stdout, res.stdout
    res = crafted(lambda buf: buf.extend(data[fmt.HEADER_SIZE:]))
    assert res.returncode == 0 and "JOB chunk at byte" in res.stderr + res.stdout
    assert "out of place" in res.stderr + res.stdout

    def rows_off(buf):
        buf[:] = with_u32(bytes(buf), job_at, len(body), 8, 4)
    res = crafted(rows_off)
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "malformed job file: 5 rank rows, JOB says 4" in res.stderr
