"""MPI calipers under real mpirun, 4 ranks: RSS/PSS read around outermost MPI
calls, as mpi-before/mpi-after timeline samples labelled with the function; every call
with HEAPSCOPE_CALIPER_MS=0, a bounded number with the default rate limit (the others
counted as skipped); MPI_Pcontrol regions as region samples."""
import subprocess

from heapscope.profile import read_profile

from conftest import PROGRAMS, require

MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "4"]
ALWAYS_MEASURED = {"MPI_Init", "MPI_Finalize"}   # of the calls tl_mpi.c makes


def expected_calls(n):
    """The outermost MPI calls of every rank of tl_mpi.c, in order (see the program)."""
    return (["MPI_Init", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Pcontrol"] + ["MPI_Comm_rank"] * n
            + ["MPI_Allreduce"] * 3 + ["MPI_Pcontrol", "MPI_Barrier", "MPI_Finalize"])


def run_ranks(heapscope, tmp_path, n, env=None):
    require("mpicc", "mpirun")
    program = tmp_path / "tl_mpi"
    if not program.exists():
        subprocess.run(["mpicc", "-g", "-o", program, PROGRAMS / "tl_mpi.c"], check=True)
    out = tmp_path / f"out{n}"
    heapscope("record", "--mpi", "-o", out, "--", *MPIRUN, program, n, env=env)
    ranks = {p.rank: p for p in map(read_profile, sorted(out.glob("*.hsp"))) if p.exe == str(program)}
    assert sorted(ranks) == [0, 1, 2, 3]
    return ranks


def mpi_samples(tl):
    return [s for s in tl.samples if s.kind in ("mpi-before", "mpi-after")]


def test_every_call_measured_without_rate_limit(heapscope, tmp_path):
    n = 20
    calls = expected_calls(n)
    for rank, p in run_ranks(heapscope, tmp_path, n, env={"HEAPSCOPE_CALIPER_MS": "0"}).items():
        tl = p.timeline
        assert (tl.calipers_taken, tl.calipers_skipped) == (len(calls), 0), rank
        pairs = mpi_samples(tl)
        # one before/after pair per call, in call order (one thread: nothing in between)
        assert [(s.kind, s.label) for s in pairs] == \
            [(k, fn) for fn in calls for k in ("mpi-before", "mpi-after")], rank
        assert all(s.rss_bytes > 0 and s.pss_bytes > 0 for s in pairs), rank
        # the calls between MPI_Pcontrol(1) (the region begins before the call) and
        # MPI_Pcontrol(0) (it ends before the call) are in the region
        inside = [s.label for s in pairs if s.region == "pcontrol-1" and s.kind == "mpi-before"]
        assert inside == ["MPI_Pcontrol"] + ["MPI_Comm_rank"] * n + ["MPI_Allreduce"] * 3, rank
        # MPI_Pcontrol marks the region: one begin, one end sample
        b = [(s.kind, s.region, s.label) for s in tl.samples if s.kind.startswith("region-")]
        assert b == [("region-begin", "pcontrol-1", "pcontrol-1"),
                     ("region-end", "pcontrol-1", "pcontrol-1")], rank
        # MPI_Init maps the library's shared memory: the calipers see non-heap RSS
        assert tl.mpi_rss_delta_bytes > 0, rank
        # heap allocated inside MPI calls shows as the MPI part of the heap
        assert max(s.heap_mpi_bytes for s in tl.samples) > 0, rank
        times = [s.mono_ns for s in tl.samples]
        assert all(a < b for a, b in zip(times, times[1:])), rank


def test_default_rate_limit_bounds_the_measured_calls(heapscope, tmp_path):
    n = 20000
    total = len(expected_calls(n))
    for rank, p in run_ranks(heapscope, tmp_path, n).items():
        tl = p.timeline
        # every outermost call is counted, measured or skipped
        assert tl.calipers_taken + tl.calipers_skipped == total, rank
        pairs = mpi_samples(tl)
        assert len(pairs) == 2 * tl.calipers_taken, rank
        befores = [s for s in pairs if s.kind == "mpi-before"]
        assert ALWAYS_MEASURED <= {s.label for s in befores}, rank
        # at most one measured call per 10 ms period, besides the always-measured ones
        run_ms = tl.samples[-1].mono_ns / 1e6
        assert tl.calipers_taken <= len(ALWAYS_MEASURED) + run_ms / 10 + 1, rank
        assert tl.calipers_skipped >= total - (len(ALWAYS_MEASURED) + run_ms / 10 + 1), rank
