"""A 4-rank job where one rank dies (tests/programs/mpi_job_ranks.c): rank 1 segfaults, or
rank 2 calls MPI_Abort(MPI_COMM_WORLD, 17), after their allocations (rank r keeps r + 1
blocks of 1,000,000 bytes and, in region "pcontrol-1", 2 of 7000); the others wait in a
barrier until the launcher kills them. Recorded without --mpi: the ranks get their MPI
layer all the same. The failed rank's counts are in its file, the job report says who
crashed of what, who aborted with which code, and who was killed; the launcher's exit
status is what it is without heapscope."""
import json
import os
import subprocess
import sys

from heapscope.profile import read_profile
from heapscope.profile.timeline import read_timeline


def _record(mpi, tmp_path, mode):
    program = mpi.compile("mpi_job_ranks.c", tmp_path / "mpi_job_ranks")
    plain = subprocess.run([*mpi.mpirun(4), str(program), mode], capture_output=True,
                           timeout=180)
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "heapscope", "record", "-o", out, "--",
                          *mpi.mpirun(4), program, mode],
                         capture_output=True, text=True, timeout=180)
    assert res.returncode == plain.returncode != 0, res.stderr
    files = {}
    for f in out.glob("*.r*.hsp"):
        files[read_timeline(f).rank] = f
    assert sorted(files) == [0, 1, 2, 3]
    return program, out, files, res


def _job(heapscope, out):
    doc = json.loads(heapscope("report", out, "--format", "json").stdout)
    listed = [r["rank"] for r in doc["per_rank"]] + [e["rank"] for e in doc["excluded"]]
    assert sorted(listed) == [0, 1, 2, 3]          # every rank of the job, with data or not
    return doc, heapscope("report", out).stdout


def _own_counts(p, rank):
    return (p.size_counts.get(("(none)", 1000000)), p.size_counts.get(("pcontrol-1", 7000)),
            sum(n for (r, _s), n in p.size_counts.items() if "[MPI]" in r.split("/")))


def test_a_segfaulting_rank_leaves_its_counts(mpi, heapscope, tmp_path):
    program, out, files, res = _record(mpi, tmp_path, "segv")
    crashed = read_profile(files[1])
    assert crashed.snapshot_reason == "crash" and crashed.ending.signal_name == "SIGSEGV"
    big, small, in_mpi = _own_counts(crashed, 1)
    assert (big, small) == (2, 2) and in_mpi > 100     # MPI attributed without --mpi
    assert os.path.basename(mpi.layer) in {os.path.basename(m.path) for m in crashed.modules}
    doc, text = _job(heapscope, out)
    assert doc["endings"]["crashed"] == [dict(rank=1, signal="SIGSEGV")]
    assert "crashed   rank 1 (SIGSEGV)" in text
    row = next(r for r in doc["per_rank"] if r["rank"] == 1)
    assert (row["ended"], row["text"], row["alloc_app_blocks"] >= 4) == ("crash", "crashed: SIGSEGV", True)
    # the survivors were killed by the launcher: Open MPI's SIGTERM leaves their
    # snapshots; hydra's SIGKILL leaves what their timeline flushed, if anything
    killed = {k["rank"] for k in doc["endings"]["killed"]} | set(doc["endings"]["no_snapshot"]) \
        | set(doc["endings"]["no_data"])
    assert killed == {0, 2, 3}
    if mpi.name == "openmpi":
        assert doc["endings"]["killed"] == [dict(rank=r, signal="SIGTERM") for r in (0, 2, 3)]
        for rank in (0, 2, 3):
            assert _own_counts(read_profile(files[rank]), rank)[:2] == (rank + 1, 2)


def test_mpi_abort_records_its_code(mpi, heapscope, tmp_path):
    program, out, files, res = _record(mpi, tmp_path, "abort")
    assert res.returncode == 17
    aborted = read_profile(files[2])
    assert aborted.snapshot_reason == "mpi-abort"
    assert (aborted.ending.kind, aborted.ending.error_code) == ("mpi-abort", 17)
    assert _own_counts(aborted, 2)[:2] == (3, 2)
    doc, text = _job(heapscope, out)
    assert doc["endings"]["aborted"] == [dict(rank=2, error_code=17)]
    assert doc["endings"]["crashed"] == []
    assert "rank 2 called MPI_Abort(17)" in text
    row = next(r for r in doc["per_rank"] if r["rank"] == 2)
    assert (row["ended"], row["text"]) == ("mpi-abort", "MPI_Abort(17)")
