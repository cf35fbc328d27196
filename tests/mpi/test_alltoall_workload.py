"""The suite's MPI workload hs-wl-mpi-alltoall recorded on 4 ranks (`record --mpi`):
per rank, the application's send and receive buffers are exactly the blocks the
workload's source allocates, all outside "[MPI]", and "[MPI]" holds the library's own.

The expected figures come from the workload's parameters and source
(workloads/c/mpi-alltoall.c): exchange `it` (0-based) sends `small` bytes per process
when it is even, `large` when odd; each exchange mallocs a send and a receive buffer of
per-process bytes x processes (two malloc lines) and frees them; rank 0 also mallocs
processes x 8 bytes for the gathered checksums. Stacks (recorded for those sizes) tell
the workload's blocks from blocks of the same size the MPI library allocates."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from heapscope.bench.workloads import BY_NAME
from heapscope.profile import read_profile

from conftest import require

WORKLOAD = BY_NAME["mpi-alltoall"]
PROCS = 4
ITERATIONS, SMALL, LARGE = 9, 2048, 4 << 20     # 9: 5 small and 4 large exchanges
SRC = "mpi-alltoall.c"


def malloc_lines():
    """Line numbers of the buffer mallocs and of rank 0's gather buffer in the source."""
    text = (Path(__file__).resolve().parents[2] / "workloads" / "c" / SRC).read_text()
    lines = text.splitlines()
    buffers = [i + 1 for i, l in enumerate(lines) if "malloc(per * (size_t)nprocs)" in l]
    gather = [i + 1 for i, l in enumerate(lines) if re.search(r"malloc\(\(size_t\)nprocs \* sizeof", l)]
    assert len(buffers) == 2 and len(gather) == 1, "the workload's mallocs moved: update this test"
    return buffers, gather[0]


def expected(rank):
    """{(size, line): blocks} the workload allocates on `rank`."""
    (send, recv), gather = malloc_lines()
    small = sum(1 for it in range(ITERATIONS) if it % 2 == 0)
    large = ITERATIONS - small
    out = {}
    for line in (send, recv):
        out[(SMALL * PROCS, line)] = small
        out[(LARGE * PROCS, line)] = large
    if rank == 0:
        out[(PROCS * 8, gather)] = 1
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    require("mpirun")
    assert WORKLOAD.built(), f"{WORKLOAD.path} is not built"
    out = tmp_path_factory.mktemp("alltoall") / "out"
    sizes = ",".join(str(s) for s in (PROCS * 8, SMALL * PROCS, LARGE * PROCS))
    res = subprocess.run([sys.executable, "-m", "heapscope", "record", "--mpi", "--sizes", sizes,
                          "-o", out, "--", "mpirun", "--oversubscribe", "--allow-run-as-root",
                          "-np", str(PROCS), WORKLOAD.path, "--iterations", str(ITERATIONS),
                          "--small", str(SMALL), "--large", str(LARGE)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"mpi-alltoall: {PROCS} processes, {ITERATIONS} exchanges" in res.stdout
    ranks = {p.rank: p for p in map(read_profile, sorted(out.glob("*.hsp")))
             if p.exe == str(WORKLOAD.path)}
    assert sorted(ranks) == list(range(PROCS))
    return out, sizes, ranks


def workload_blocks(heapscope, path, sizes):
    """{(size, region, line of the workload's malloc or None): (blocks, bytes)} by stacks."""
    doc = json.loads(heapscope("stacks", path, "--size", sizes, "--top", "0", "--format",
                               "json").stdout)
    out = {}
    for group in doc["groups"]:
        for t in group["stack_types"]:
            f = t["frames"][0]
            line = f["line"] if f["function"] == "main" and f["file"].endswith(SRC) else None
            key = (group["size"], group["region"], line)
            blocks, nbytes = out.get(key, (0, 0))
            out[key] = (blocks + t["count"], nbytes + t["bytes"])
    return out


def test_buffers_are_the_applications_exactly_per_rank(recorded, heapscope):
    _, sizes, ranks = recorded
    for rank, p in ranks.items():
        got = workload_blocks(heapscope, p.path, sizes)
        mine = {(size, line): v for (size, region, line), v in got.items() if line is not None}
        want = expected(rank)
        assert {k: v[0] for k, v in mine.items()} == want, rank
        assert {k: v[1] for k, v in mine.items()} == {k: n * k[0] for k, n in want.items()}, rank
        # every one of them outside MPI calls, in the top-level region
        assert {region for (_, region, line) in got if line is not None} == {"(none)"}, rank
        assert not any("[MPI]" in region.split("/") for (_, region, line) in got
                       if line is not None), rank
        # the counts agree: the large buffers' size is the workload's alone
        large = LARGE * PROCS
        assert {r: n for (r, s), n in p.size_counts.items() if s == large} == \
            {"(none)": 2 * (ITERATIONS // 2)}, rank


def test_mpi_region_holds_the_librarys_blocks(recorded, heapscope):
    out, _, ranks = recorded
    for rank, p in ranks.items():
        mpi = {(r, s): n for (r, s), n in p.size_counts.items() if "[MPI]" in r.split("/")}
        assert sum(mpi.values()) > 0 and sum(s * n for (_, s), n in mpi.items()) > 0, rank
        assert {r for r, _ in mpi} == {"[MPI]"}, rank     # no region of the program's own
    doc = json.loads(heapscope("report", out, "--format", "json").stdout)
    assert [r["rank"] for r in doc["per_rank"]] == list(range(PROCS))
    for row in doc["per_rank"]:
        p = ranks[row["rank"]]
        want_app = sum(n * size for (size, _), n in expected(row["rank"]).items())
        assert row["alloc_mpi_bytes"] == sum(s * n for (r, s), n in p.size_counts.items()
                                             if "[MPI]" in r.split("/")) > 0
        assert row["alloc_app_bytes"] >= want_app
