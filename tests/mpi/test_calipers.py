"""MPI calipers under real mpirun, 4 ranks: RSS/PSS read around outermost MPI
calls, as mpi-before/mpi-after timeline samples labelled with the function; every call
with HEAPSCOPE_CALIPER_MS=0, a bounded number with the default rate limit (the others
counted as skipped); MPI_Pcontrol regions as region samples. Per MPI function (src/mpi/
gen_wrappers.py): calls that cannot allocate (MPI_Comm_rank, MPI_Comm_size) are not
wrapped, neither measured nor counted; calls that map memory (MPI_Init, MPI_Finalize)
are always measured, with PSS; the others are measured at the rate limit, RSS only."""
import subprocess

from heapscope.profile import read_profile

from conftest import MPI_FAMILIES, require

ALWAYS_MEASURED = {"MPI_Init", "MPI_Finalize"}   # of the calls tl_mpi.c makes
NOT_WRAPPED = {"MPI_Comm_rank", "MPI_Comm_size"}  # of the calls tl_mpi.c makes


def expected_calls(n):
    """The MPI calls through the layer of every rank of tl_mpi.c, in order (see the
    program; its MPI_Comm_rank and MPI_Comm_size calls are not wrapped)."""
    return (["MPI_Init", "MPI_Pcontrol"] + ["MPI_Test"] * n + ["MPI_Allreduce"] * 3
            + ["MPI_Pcontrol", "MPI_Barrier", "MPI_Finalize"])


def run_ranks(heapscope, tmp_path, n, env=None, mpi=MPI_FAMILIES["openmpi"]):
    program = tmp_path / f"tl_mpi.{mpi.name}"
    if not program.exists():
        mpi.compile("tl_mpi.c", program)
    require(mpi.run[0])
    out = tmp_path / f"out{n}.{mpi.name}"
    heapscope("record", "--mpi", "-o", out, "--", *mpi.mpirun(4), program, n, env=env)
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
        assert all(s.rss_bytes > 0 for s in pairs), rank
        # PSS (smaps_rollup) around the calls that map memory only; the others read the
        # cheap RSS counter (statm)
        assert {s.label for s in pairs if s.pss_bytes > 0} == ALWAYS_MEASURED, rank
        assert all(s.pss_bytes == -1 for s in pairs if s.label not in ALWAYS_MEASURED), rank
        # the calls between MPI_Pcontrol(1) (the region begins before the call) and
        # MPI_Pcontrol(0) (it ends before the call) are in the region
        inside = [s.label for s in pairs if s.region == "pcontrol-1" and s.kind == "mpi-before"]
        assert inside == ["MPI_Pcontrol"] + ["MPI_Test"] * n + ["MPI_Allreduce"] * 3, rank
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
        # every call through the layer is counted, measured or skipped
        assert tl.calipers_taken + tl.calipers_skipped == total, rank
        pairs = mpi_samples(tl)
        assert len(pairs) == 2 * tl.calipers_taken, rank
        befores = [s for s in pairs if s.kind == "mpi-before"]
        assert ALWAYS_MEASURED <= {s.label for s in befores}, rank
        # at most one measured call per 10 ms period, besides the always-measured ones
        run_ms = tl.samples[-1].mono_ns / 1e6
        assert tl.calipers_taken <= len(ALWAYS_MEASURED) + run_ms / 10 + 1, rank
        assert tl.calipers_skipped >= total - (len(ALWAYS_MEASURED) + run_ms / 10 + 1), rank


def test_each_function_calipered_or_not_by_what_it_can_do(heapscope, tmp_path, mpi):
    """Open MPI and MPICH: every call measured (HEAPSCOPE_CALIPER_MS=0); MPI_Comm_rank and
    MPI_Comm_size, which cannot allocate, have no wrapper, so no caliper and no count;
    MPI_Test, which can (the progress engine), is measured every time, from statm (RSS
    only); MPI_Init and MPI_Finalize, which map the library's segments, with PSS too."""
    n = 50
    calls = expected_calls(n)
    for rank, p in run_ranks(heapscope, tmp_path, n, env={"HEAPSCOPE_CALIPER_MS": "0"},
                             mpi=mpi).items():
        tl = p.timeline
        pairs = mpi_samples(tl)
        labels = [s.label for s in pairs if s.kind == "mpi-before"]
        assert labels == calls, (mpi.name, rank)
        assert not NOT_WRAPPED & set(labels), (mpi.name, rank)
        assert (tl.calipers_taken, tl.calipers_skipped) == (len(calls), 0), (mpi.name, rank)
        for s in pairs:
            assert s.rss_bytes > 0, (mpi.name, rank, s)
            assert (s.pss_bytes > 0) == (s.label in ALWAYS_MEASURED), (mpi.name, rank, s)


def test_layer_defines_no_wrapper_for_calls_that_cannot_allocate(native, mpi):
    """The layer's exported MPI symbols: none for the queries (the program binds straight
    to the MPI library, C and Fortran), one for every call that can allocate."""
    out = subprocess.run(["nm", "-D", "--defined-only", str(native / "lib" / mpi.layer)],
                         capture_output=True, text=True, check=True).stdout
    defined = {line.split()[-1] for line in out.splitlines() if line.strip()}
    for name in ("MPI_Comm_rank", "MPI_Comm_size", "MPI_Type_size", "MPI_Get_count",
                 "MPI_Initialized", "MPI_Cart_shift"):
        assert name not in defined, (mpi.layer, name)
        assert name.lower() + "_f08_" not in defined, (mpi.layer, name)
    for name in ("MPI_Isend", "MPI_Irecv", "MPI_Send", "MPI_Recv", "MPI_Wait", "MPI_Waitall",
                 "MPI_Test", "MPI_Allreduce", "MPI_Init", "MPI_Alloc_mem", "MPI_Comm_split"):
        assert name in defined, (mpi.layer, name)
        assert name.lower() + "_f08_" in defined, (mpi.layer, name)
