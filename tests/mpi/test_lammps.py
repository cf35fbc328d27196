"""A real MPI application from Debian under the recorder: LAMMPS (packages lammps and
lammps-examples), the Lennard-Jones melt example on 4 ranks. The recorded run prints
the same thermodynamic output as a plain run, leaves one profile per rank, and the
job and library reports are plausible: LAMMPS's own blocks are the application's and
come from liblammps, the MPI library's come from Open MPI's libraries. The Python API's
tables on that job (docs/python-api.md's worked example) are the reports' figures, the
launcher left out."""
import json
import subprocess
from pathlib import Path

import heapscope
from heapscope.profile import read_profile

from conftest import require

MELT = Path("/usr/share/lammps/examples/melt/in.melt")
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "4"]


def _thermo(stdout: str):
    """The thermo table: from the "Step ..." header up to "Loop time"."""
    lines = stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.split()[:2] == ["Step", "Temp"])
    end = next(i for i, l in enumerate(lines) if l.startswith("Loop time"))
    rows = [l.split() for l in lines[start + 1:end]]
    assert [r[0] for r in rows] == ["0", "50", "100", "150", "200", "250"]
    return rows


def test_lammps_melt_on_4_ranks(heapscope, tmp_path):
    require("lmp")
    assert MELT.exists(), f"{MELT} is not installed: run scripts/setup.sh (lammps-examples)"
    lmp = ["lmp", "-in", str(MELT), "-log", "none"]
    plain = subprocess.run(MPIRUN + lmp, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert plain.returncode == 0, plain.stderr[-800:]
    out = tmp_path / "prof"
    rec = heapscope("record", "--mpi", "--sizes", "all", "-o", out, "--", *MPIRUN, *lmp, cwd=tmp_path)
    assert _thermo(rec.stdout) == _thermo(plain.stdout)

    ranks = {}
    for f in out.glob("*.hsp"):
        p = read_profile(f)
        if p.rank >= 0:
            assert p.rank not in ranks and p.complete and p.snapshot_reason == "exit"
            ranks[p.rank] = p
    assert sorted(ranks) == [0, 1, 2, 3]

    doc = json.loads(heapscope("report", out, "--format", "json").stdout)
    assert doc["ranks"] == 4 and [r["rank"] for r in doc["per_rank"]] == [0, 1, 2, 3]
    assert len(doc["executables"]) == 1 and doc["executables"][0].endswith("/lmp")
    for row in doc["per_rank"]:
        # 1000 atoms per rank: positions, velocities, forces alone are 72 KB; neighbor
        # lists and the communication buffers are more. Open MPI's start-up is megabytes.
        assert row["alloc_app_blocks"] > 1000 and row["alloc_app_bytes"] > 500_000, row
        assert row["alloc_mpi_blocks"] > 1000 and row["alloc_mpi_bytes"] > 1_000_000, row
    api_tables_are_the_reports(out, doc)
    s = doc["stats"]["alloc_app_bytes"]
    values = {r["rank"]: r["alloc_app_bytes"] for r in doc["per_rank"]}
    assert (s["min"], s["max"]) == (min(values.values()), max(values.values()))

    for rank, p in ranks.items():
        lib = json.loads(heapscope("report", "--by", "library", p.path, "--format", "json").stdout)
        by_name = {d["name"]: d for d in lib["libraries"]}
        lammps = next(d for n, d in by_name.items() if n.startswith("liblammps"))
        assert lammps["count"] > 1000 and lammps["in_mpi_count"] == 0, rank
        assert by_name["libopen-pal.so.40"]["in_mpi_count"] > 1000, rank
        # every block is accounted for: attributed, or listed as counted without a stack
        stacked = sum(t.count for t in p.stack_types)
        assert lib["no_stack"]["count"] == sum(p.size_counts.values()) - stacked
        assert sum(d["count"] for d in lib["libraries"]) == stacked


def api_tables_are_the_reports(out, doc):
    rec = heapscope.open(out)
    assert rec.is_job and any(n.startswith("left out") for n in rec.notes)
    procs = rec.processes(as_frame=False)
    assert sorted(p["rank"] for p in procs) == [0, 1, 2, 3]             # no mpirun
    assert all(p["exe"].endswith("/lmp") and p["reason"] == "exit" for p in procs)
    per_rank = {r["rank"]: r for r in doc["per_rank"]}
    counted = {}
    for row in rec.sizes(as_frame=False):
        counted[row["rank"]] = counted.get(row["rank"], 0) + row["count"]
    assert counted == {r: per_rank[r]["alloc_blocks"] for r in per_rank}
    ranks = {r["rank"]: r for r in rec.ranks(as_frame=False)}
    for r in per_rank:
        assert (ranks[r]["alloc_mpi_blocks"], ranks[r]["heap_peak"]) == \
            (per_rank[r]["alloc_mpi_blocks"], per_rank[r]["heap_peak"])
    frame = rec.sizes()                                                 # pandas: a test extra
    assert str(frame["rank"].dtype) == "int64" and set(frame["rank"]) == {0, 1, 2, 3}
