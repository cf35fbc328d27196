"""Jobs ended from outside or by a failed rank, under `heapscope record`, with real Open MPI
and MPICH: every rank keeps its counts, the job ends about as fast as without the
recorder, and the report says how each rank ended.

tests/programs/mpi_job_ranks.c segv: rank 1 segfaults after its allocations; Open MPI
tears the others down (SIGCONT, SIGTERM a second later, SIGKILL as soon as one of them
has died). tests/programs/mpi_wait_ranks.c: rank r keeps r + 1 blocks of 1,000,000
bytes, then every rank waits; then SIGINT is sent to record, which passes it on to the
launcher: hydra (MPICH) passes it to the ranks and SIGKILLs those left as soon as one
has died; Open MPI's mpirun tears the job down with SIGTERM (the same race). Sent
twice to mpirun (a terminal's Ctrl-C reaches it besides record's), it dies at once,
and its ranks, their launcher gone, _exit from inside the MPI library."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from heapscope.profile import read_profile
from heapscope.profile.timeline import read_timeline

from conftest import MPI_FAMILIES


def _rank_files(out):
    files = {}
    for f in out.glob("*.r*.hsp"):
        files.setdefault(read_timeline(f).rank, f)
    return files


def test_a_crashed_open_mpi_job_ends_promptly_with_every_ranks_snapshot(heapscope, tmp_path):
    """record gave Open MPI's ranks 10 s before SIGKILL: a crashed job took 20 s to end
    (2 s without the recorder), and the first rank to die still got the others killed
    in the middle of their snapshots."""
    openmpi = MPI_FAMILIES["openmpi"]
    program = openmpi.compile("mpi_job_ranks.c", tmp_path / "mpi_job_ranks")
    start = time.monotonic()
    plain = subprocess.run([*openmpi.mpirun(4), str(program), "segv"], capture_output=True,
                           timeout=120)
    plain_s = time.monotonic() - start
    out = tmp_path / "out"
    start = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "heapscope", "record", "-o", out, "--",
                          *openmpi.mpirun(4), program, "segv"], capture_output=True, text=True,
                         timeout=120)
    recorded_s = time.monotonic() - start
    assert res.returncode == plain.returncode != 0, res.stderr
    assert recorded_s < plain_s + 6, (recorded_s, plain_s)
    files = _rank_files(out)
    assert sorted(files) == [0, 1, 2, 3]
    for rank in (0, 2, 3):
        p = read_profile(files[rank])
        assert (p.snapshot_reason, p.complete) == ("sigterm", True), rank
        assert p.size_counts[("(none)", 1000000)] == rank + 1
    doc = json.loads(heapscope("report", out, "--format", "json").stdout)
    assert doc["endings"]["killed"] == [dict(rank=r, signal="SIGTERM") for r in (0, 2, 3)]
    assert doc["endings"]["crashed"] == [dict(rank=1, signal="SIGSEGV")]


def _children(pid):
    out = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as fh:
                if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry))
        except (OSError, ValueError, IndexError):
            pass
    return out


def _interrupted(mpi, tmp_path, twice=False):
    """mpi_wait_ranks on 4 ranks under record, interrupted once every rank is waiting:
    SIGINT to record, or twice to the launcher; (record's exit status, its stderr, the
    output directory)."""
    program = mpi.compile("mpi_wait_ranks.c", tmp_path / "mpi_wait_ranks")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "heapscope", "record", "-o", str(out), "--",
                             *mpi.mpirun(4), str(program)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        ready = [proc.stdout.readline() for _ in range(4)]
        assert sorted(line.split()[0] for line in ready) == ["ready"] * 4, ready
        if twice:
            [launcher] = _children(proc.pid)
            for _ in range(2):
                os.kill(launcher, signal.SIGINT)
                time.sleep(0.05)
        else:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    return proc.returncode, err, out


def _every_rank_kept(out):
    files = _rank_files(out)
    assert sorted(files) == [0, 1, 2, 3]
    for rank, f in files.items():
        p = read_profile(f)
        assert p.complete, (rank, p.warnings)
        assert p.size_counts[("(none)", 1000000)] == rank + 1


def test_ranks_interrupted_together_keep_their_counts(mpi, heapscope, tmp_path):
    """The first rank to end its snapshot and die got the launcher to SIGKILL the
    others: now they wait for each other (core/teardown.c)."""
    rc, err, out = _interrupted(mpi, tmp_path)
    _every_rank_kept(out)
    doc = json.loads(heapscope("report", out, "--format", "json").stdout)
    signal_name = "SIGINT" if mpi.name == "mpich" else "SIGTERM"
    assert {r["rank"]: r["text"] for r in doc["per_rank"]} == {
        r: f"killed: {signal_name}" for r in range(4)}


def test_ranks_whose_launcher_died_are_no_plain_exit(heapscope, tmp_path):
    """mpirun died of a second SIGINT; its ranks _exit before MPI_Finalize: a rank torn
    down, not one that finished (the report said "exit")."""
    rc, err, out = _interrupted(MPI_FAMILIES["openmpi"], tmp_path, twice=True)
    _every_rank_kept(out)
    doc = json.loads(heapscope("report", out, "--format", "json").stdout)
    fates = {r["rank"]: (r["ended"], r["text"]) for r in doc["per_rank"]}
    assert {e for e, _ in fates.values()} == {"no-finalize"}, fates
    assert all(t.endswith("before MPI_Finalize; its launcher had ended") for _, t in fates.values())
    early = doc["endings"]["unfinalized"]
    assert [e["rank"] for e in early] == [0, 1, 2, 3] and all(e["orphaned"] for e in early)
    assert "ended     ranks 0, 1, 2, 3 exited before MPI_Finalize" in heapscope("report", out).stdout


def test_job_rows_and_kept_files_give_the_same_figures(mpi, heapscope, tmp_path):
    """With every rank's file kept beside the job file, each row of the job file gives
    the figures of that rank's own file as MPI_Finalize began: the MPI calipers' figures
    the same (MPI_Finalize's own call left out: the rows differed), the heap peaks exact
    (no longer marked sampled) and at most the file's (which MPI_Finalize's own blocks
    may raise); the per-host RSS and PSS are the per-rank figures added up."""
    program = mpi.compile("mpi_job_ranks.c", tmp_path / "mpi_job_ranks")
    out = tmp_path / "out"
    heapscope("record", "--per-rank", "all", "-o", out, "--", *mpi.mpirun(4), program)
    [job_file] = out.glob("*.job.hsj")
    from heapscope.profile.job_file import read_job_file
    rows = {r.rank: r for r in read_job_file(job_file).ranks}
    doc = json.loads(heapscope("report", out, "--format", "json").stdout)
    per_rank = {r["rank"]: r for r in doc["per_rank"]}
    assert sorted(rows) == sorted(per_rank) == [0, 1, 2, 3]
    for rank, row in rows.items():
        assert row.heap_exact
        for key in ("mpi_rss", "mpi_pss"):
            assert row.metrics[key] == per_rank[rank][key], (rank, key)
        for key in ("heap_peak", "heap_app_peak", "heap_mpi_peak"):
            assert 0 < row.metrics[key] <= per_rank[rank][key], (rank, key)
    sampled = {m["key"]: m["sampled"] for m in doc["metrics"]}
    assert not sampled["heap_peak"] and not sampled["heap_app_peak"] and sampled["pss_peak"]
    [host] = doc["job_file"]["hosts"]
    assert (host["ranks"], host["pss_max"], host["rss_sum"]) == (
        4, max(r["pss_peak"] for r in per_rank.values()), sum(r["rss_peak"] for r in per_rank.values()))
