"""The Python API on an MPI job (heapscope.open of a job's directory): a real 4-rank run
(tests/programs/mpi_job_ranks.c sigkill) where rank 2 is killed by SIGKILL, so its file
has a timeline and no snapshot. The tables hold the three complete ranks and say the
fourth was left out; ranks() and job() are the job report's, with all four. mpirun and
its forks are left out of the tables, as the reports leave them out (launchers=True
keeps them, rank None)."""
import heapscope

from conftest import record_killed_rank_job

KILLED = 2


def test_a_job_with_a_killed_rank(tmp_path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "pandas", None)      # lists: the same with or without
    _, out, _ = record_killed_rank_job(tmp_path, "sigkill", "--timeline-interval", "20ms",
                                       env={"HEAPSCOPE_TIMELINE_FLUSH_MS": "100"})
    rec = heapscope.open(out)
    assert rec.is_job
    # mpirun and orted (and the forks that exec'd them) left out, as the reports do
    assert sorted(p.rank for p in rec.profiles) == [0, 1, 3]
    assert sorted(r["rank"] for r in rec.processes()) == [0, 1, 3]
    [note] = [n for n in rec.notes if n.startswith("left out")]
    assert "orterun pid" in note and "--launchers includes" in note
    everyone = heapscope.open(out, launchers=True)
    launchers = [r for r in everyone.processes() if r["rank"] is None]
    assert {r["exe"].rsplit("/", 1)[-1] for r in launchers} == {"orterun"}   # (one node: no orted)
    assert sorted(r["rank"] for r in everyone.processes() if r["rank"] is not None) == [0, 1, 3]
    assert not [n for n in everyone.notes if n.startswith("left out")]
    [left_out] = [w for w in rec.warnings if "left out of the tables" in w]
    assert f".r{KILLED}." in left_out and "no complete snapshot" in left_out
    sizes = [r for r in rec.sizes(size="7000") if r["region"] == "pcontrol-1"]
    assert sorted((r["rank"], r["count"]) for r in sizes) == [(0, 2), (1, 2), (3, 2)]
    ranks = {r["rank"]: r for r in rec.ranks()}
    assert sorted(ranks) == [0, 1, 2, 3]
    assert ranks[KILLED]["alloc_blocks"] is None                 # no counts: no snapshot
    assert ranks[KILLED]["heap_app_peak"] >= 3 * 1_000_000 + 2 * 7000
    assert ranks[0]["alloc_blocks"] == sum(r["count"] for r in rec.sizes() if r["rank"] == 0)
    assert rec.job()["ranks"] == 4
