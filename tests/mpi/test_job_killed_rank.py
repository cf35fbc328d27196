"""The job report of a job where a rank was killed by SIGKILL (OOM killer, scheduler):
a real 4-rank run (tests/programs/mpi_job_ranks.c sigkill) where rank 2 SIGKILLs itself after
its allocations and two timeline flushes, so its file holds the timeline and no
snapshot. The report keeps the rank with what it has (heap/RSS/PSS peaks from its
samples), marks it, leaves its counts empty, takes each statistic over the ranks that
have the figure and says how many; a rank file with neither a snapshot nor samples is
left out with a warning."""
import csv
import io
import json
import shutil

import pytest

from heapscope.errors import HeapscopeError
from heapscope.profile import read_profile
from heapscope.profile.timeline import read_timeline

from conftest import record_killed_rank_job
from helpers.profile_builder import ProfileBuilder

KILLED = 2
COUNTS = ("alloc_blocks", "alloc_app_blocks", "alloc_mpi_blocks", "alloc_bytes",
          "alloc_app_bytes", "alloc_mpi_bytes")


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    program, out, res = record_killed_rank_job(
        tmp_path_factory.mktemp("killed"), "sigkill", "--timeline-interval", "20ms",
        env={"HEAPSCOPE_TIMELINE_FLUSH_MS": "100"})
    assert "signal 9" in res.stderr, res.stderr    # not exit 3: its file never grew
    files = {}
    for f in out.glob("*.r*.hsp"):
        p = read_timeline(f)
        files[p.rank] = f
    assert sorted(files) == [0, 1, 2, 3]
    return program, out, files


def _peaks(samples):
    return dict(heap_peak=max(s.heap_bytes for s in samples),
                heap_app_peak=max(max(s.heap_bytes - s.heap_mpi_bytes, 0) for s in samples),
                heap_mpi_peak=max(s.heap_mpi_bytes for s in samples),
                rss_peak=max(s.rss_bytes for s in samples),
                pss_peak=max(s.pss_bytes for s in samples if s.pss_bytes >= 0))


def test_the_killed_rank_has_only_its_timeline(job):
    _, _, files = job
    with pytest.raises(HeapscopeError, match="no complete snapshot"):
        read_profile(files[KILLED])
    tl = read_timeline(files[KILLED]).timeline
    assert not any(s.kind == "final" for s in tl.samples)
    # it held 3 x 1,000,000 + 2 x 7000 bytes of its own when it died
    assert _peaks(tl.samples)["heap_app_peak"] >= 3 * 1000000 + 2 * 7000
    for rank in (0, 1, 3):
        assert read_profile(files[rank]).size_counts[("pcontrol-1", 7000)] == 2


def test_job_report_keeps_the_killed_rank(job, heapscope):
    program, out, files = job
    res = heapscope("report", out, "--format", "json")
    assert res.returncode == 0 and res.stderr == ""
    doc = json.loads(res.stdout)
    assert doc["ranks"] == 4 and [r["rank"] for r in doc["per_rank"]] == [0, 1, 2, 3]
    assert doc["no_snapshot"] == [KILLED] and doc["excluded"] == []
    assert len(doc["warnings"]) == 1 and f"rank {KILLED} " in doc["warnings"][0]
    full = {r: read_profile(files[r]) for r in (0, 1, 3)}
    killed = read_timeline(files[KILLED])
    for row in doc["per_rank"]:
        rank = row["rank"]
        tl = (killed if rank == KILLED else full[rank]).timeline
        sampled = _peaks(tl.samples)
        # heap peaks: exact (HEAP_PEAK, up to the last flush), at least every sample's
        exact = dict(heap_peak=tl.heap_peak, heap_app_peak=tl.heap_peak_app,
                     heap_mpi_peak=tl.heap_peak_mpi)
        assert {k: row[k] for k in sampled} == dict(sampled, **exact), rank
        assert all(exact[k] >= sampled[k] for k in exact), rank
        if rank == KILLED:
            assert (row["reason"], row["has_snapshot"], row["complete"]) == ("none", False, False)
            assert all(row[k] is None for k in COUNTS)
            assert row["pid"] == killed.pid and row["file"] == str(files[KILLED])
        else:
            assert row["has_snapshot"] and row["reason"] != "none"
            p = full[rank]
            app = sum(s * n for (r, s), n in p.size_counts.items() if "[MPI]" not in r.split("/"))
            assert row["alloc_app_bytes"] == app and row["alloc_blocks"] == sum(p.size_counts.values())
    # counts: over the 3 ranks that have them; peaks: over all 4
    apps = {r["rank"]: r["alloc_app_bytes"] for r in doc["per_rank"] if r["rank"] != KILLED}
    s = doc["stats"]["alloc_app_bytes"]
    assert (s["ranks"], s["min_rank"], s["max_rank"]) == (3, 0, 3)
    assert (s["min"], s["max"]) == (apps[0], apps[3])
    assert s["mean"] == pytest.approx(sum(apps.values()) / 3)
    heaps = [r["heap_app_peak"] for r in doc["per_rank"]]
    s = doc["stats"]["heap_app_peak"]
    assert s["ranks"] == 4 and s["mean"] == pytest.approx(sum(heaps) / 4)
    assert (s["max"], s["max_rank"]) == (max(heaps), heaps.index(max(heaps)))
    regions = {r["region"]: r for r in doc["regions"]}
    pc = regions["pcontrol-1"]
    assert (pc["alloc_app_bytes"]["ranks"], pc["alloc_app_bytes"]["min"]) == (3, 14000)
    assert pc["heap_peak"]["ranks"] == 4    # the killed rank's samples in the region count
    tl = doc["timeline"]
    assert [r["rank"] for r in tl["per_rank"]] == [0, 1, 2, 3]
    # the timeline's bins hold samples: their largest is the sampled peak
    assert max(tl["per_rank"][KILLED]["app"]) == _peaks(killed.timeline.samples)["heap_app_peak"]


def test_text_and_csv_mark_the_killed_rank(job, heapscope):
    _, out, _ = job
    text = heapscope("report", out).stdout
    lines = text.splitlines()
    warnings = [l for l in lines if l.startswith("  warning")]
    assert len(warnings) == 1 and f"rank {KILLED} " in warnings[0] and "without a snapshot" in warnings[0]
    killed = [l for l in lines if l.startswith("  killed")]
    assert f"  killed    rank {KILLED} without a final snapshot (SIGKILL): its last timeline " \
           f"data" in killed
    # the others may have been stopped by mpirun's SIGTERM (they wrote their snapshot then)
    assert all(f" {KILLED}," not in l and f" {KILLED} by" not in l for l in killed if "SIGTERM" in l)
    doc = json.loads(heapscope("report", out, "--format", "json").stdout)
    per_rank = lines[lines.index("Per rank") + 1:]
    row = next(l.split() for l in per_rank if l.split() and l.split()[0] == f"r{KILLED}")
    # rank host pid ended | app bytes, MPI bytes, app blocks, MPI blocks | heap peak ...
    assert row[3] == "none" and row[4:8] == ["-"] * 4
    assert row[8] == f"{doc['per_rank'][KILLED]['heap_peak']:,}"
    across = lines[lines.index("Across ranks (min and max: which rank on which host)") + 1:]
    assert across[0].split()[-1] == "ranks"
    app_bytes = next(l for l in across if l.strip().startswith("allocated bytes, application"))
    heap_app = next(l for l in across if l.strip().startswith("heap peak, application"))
    assert app_bytes.split()[-1] == "3" and heap_app.split()[-1] == "4"

    table = list(csv.DictReader(io.StringIO(heapscope("report", out, "--format", "csv").stdout)))
    killed = {r["metric"]: r["value"] for r in table if r["section"] == "rank" and r["rank"] == str(KILLED)}
    assert all(killed[k] == "" for k in COUNTS) and int(killed["heap_app_peak"]) > 3000000
    ranks = {r["metric"]: r["value"] for r in table if r["section"] == "ranks"}
    assert (ranks["alloc_app_bytes"], ranks["heap_app_peak"]) == ("3", "4")


def test_rank_file_with_neither_snapshot_nor_timeline_is_left_out(job, heapscope, tmp_path):
    _, out, files = job
    d = tmp_path / "job"
    shutil.copytree(out, d)
    keep = read_profile(files[3])
    gone = d / files[3].name            # rank 3's file: the header only
    ProfileBuilder(pid=keep.pid, ppid=keep.ppid, rank=3, host=keep.host, exe=keep.exe,
                   job_id=keep.job_id).write(gone)
    empty = d / f"heapscope.{keep.job_id}.r4.{keep.host}.99999.hsp"
    empty.write_bytes(b"")              # killed between opening its file and writing it
    res = heapscope("report", d, "--format", "json")
    doc = json.loads(res.stdout)
    assert doc["ranks"] == 3 and [r["rank"] for r in doc["per_rank"]] == [0, 1, 2]
    assert sorted((e["file"], e["rank"]) for e in doc["excluded"]) == \
        sorted([(str(gone), 3), (str(empty), 4)])
    assert doc["no_snapshot"] == [KILLED] and len(doc["warnings"]) == 2
    assert doc["stats"]["alloc_app_bytes"]["ranks"] == 2
    text = heapscope("report", d).stdout
    warnings = [l for l in text.splitlines() if l.startswith("  warning")]
    assert len(warnings) == 2
    assert "left out" in warnings[1] and "rank 3" in warnings[1] and "rank 4" in warnings[1]
    # nothing left: a one-line error
    for f in d.glob("*.r*.hsp"):
        f.write_bytes(b"")
    res = heapscope("report", d, check=False)
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert "neither a snapshot nor timeline samples" in res.stderr


def test_killed_rank_in_files_named_otherwise(job, heapscope, tmp_path):
    """The job report is chosen from the profiles' ranks when the file names do not say
    (copied under other names), and when the files are named one by one."""
    _, out, files = job
    d = tmp_path / "renamed"
    d.mkdir()
    for i, f in enumerate(sorted(out.glob("*.hsp"))):
        shutil.copy(f, d / f"p{i}.hsp")
    for args in ([d], sorted(out.glob("*.hsp"))):
        doc = json.loads(heapscope("report", *args, "--format", "json").stdout)
        assert doc["format"] == "heapscope-job" and doc["ranks"] == 4
        assert doc["no_snapshot"] == [KILLED] and doc["per_rank"][KILLED]["heap_peak"] > 3000000
    # the size table needs counts: --by size on it stays a one-line error
    res = heapscope("report", "--by", "size", files[KILLED], check=False)
    assert res.returncode == 2 and "no complete snapshot" in res.stderr
