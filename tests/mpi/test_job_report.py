"""The job report (`heapscope report DIR` on an MPI job's rank files): a real 4-rank run
with a rank killed by SIGTERM, checked against the rank files read one by one and the
program's known allocations; a synthetic 100-rank job (the parallel reading path)."""
import csv
import io
import json

import pytest

from heapscope.profile import read_profile

from conftest import record_killed_rank_job
from helpers.profile_builder import ProfileBuilder



def _app_mpi(p):
    app = sum(s * n for (r, s), n in p.size_counts.items() if "[MPI]" not in r.split("/"))
    mpi = sum(s * n for (r, s), n in p.size_counts.items() if "[MPI]" in r.split("/"))
    return app, mpi


@pytest.fixture(scope="module")
def killed_job(tmp_path_factory):
    """mpi_job_ranks on 4 ranks under record --mpi, rank 2 raising SIGTERM on itself."""
    program, out, _ = record_killed_rank_job(tmp_path_factory.mktemp("job"), "kill")
    return program, out


def test_one_readable_file_per_rank_even_the_killed_one(killed_job):
    program, out = killed_job
    ranks = {}
    for f in out.glob("*.hsp"):
        p = read_profile(f)
        if p.rank >= 0:
            assert p.rank not in ranks
            ranks[p.rank] = p
    assert sorted(ranks) == [0, 1, 2, 3]
    assert ranks[2].snapshot_reason == "sigterm"
    # a SIGTERM snapshot reduces nothing (no MPI call from a signal handler): no job file,
    # every rank keeps its own file (--per-rank's default would have dropped some)
    assert not list(out.glob("*.hsj"))
    assert len({p.job_id for p in ranks.values()}) == 1
    for rank, p in ranks.items():
        assert f".r{rank}." in p.path and p.exe == str(program)
        assert p.size_counts[("(none)", 1000000)] == rank + 1
        assert p.size_counts[("pcontrol-1", 7000)] == 2
        assert _app_mpi(p)[1] > 0


def test_job_report_agrees_with_the_rank_files(killed_job, heapscope):
    program, out = killed_job
    ranks = {p.rank: p for p in map(read_profile, out.glob("*.hsp")) if p.rank >= 0}
    doc = json.loads(heapscope("report", out, "--format", "json").stdout)
    assert doc["format"] == "heapscope-job" and doc["ranks"] == 4
    assert doc["executables"] == [str(program)]
    assert [r["rank"] for r in doc["per_rank"]] == [0, 1, 2, 3]
    assert {o["exe"].rsplit("/", 1)[-1] for o in doc["others"]} <= {"orterun", "mpirun"}
    assert doc["per_rank"][2]["reason"] == "sigterm"
    expected = {}
    for rank, p in ranks.items():
        app, mpi = _app_mpi(p)
        row = doc["per_rank"][rank]
        assert (row["alloc_app_bytes"], row["alloc_mpi_bytes"], row["host"], row["pid"]) == \
            (app, mpi, p.host, p.pid)
        samples = p.timeline.samples
        heap = max(x.heap_bytes for x in samples)
        app_heap = max(max(x.heap_bytes - x.heap_mpi_bytes, 0) for x in samples)
        rss = max(x.rss_bytes for x in samples)
        assert row["rss_peak"] == rss
        # heap peaks: exact (every allocation and free), at least every sample's
        assert (row["heap_peak"], row["heap_app_peak"]) == (p.timeline.heap_peak,
                                                             p.timeline.heap_peak_app)
        assert row["heap_peak"] >= heap and row["heap_app_peak"] >= app_heap
        heap, app_heap = row["heap_peak"], row["heap_app_peak"]
        # rank r's r + 1 blocks of 1 MB and 2 of 7000 bytes were live together
        assert app_heap >= (rank + 1) * 1000000 + 14000, (rank, app_heap)
        expected[rank] = (app, mpi, p.host, heap, app_heap, rss)
    for key, i in (("alloc_app_bytes", 0), ("alloc_mpi_bytes", 1), ("heap_peak", 3),
                   ("heap_app_peak", 4), ("rss_peak", 5)):
        s = doc["stats"][key]
        lo = min(expected, key=lambda r: (expected[r][i], r))
        hi = max(expected, key=lambda r: (expected[r][i], -r))
        assert (s["min"], s["min_rank"], s["min_host"]) == (expected[lo][i], lo, expected[lo][2])
        assert (s["max"], s["max_rank"], s["max_host"]) == (expected[hi][i], hi, expected[hi][2])
        assert s["mean"] == pytest.approx(sum(v[i] for v in expected.values()) / 4)
    # rank r keeps r + 1 blocks of 1 MB (the start-up's few KB differ a little by rank)
    s = doc["stats"]["alloc_app_bytes"]
    assert (s["min_rank"], s["max_rank"]) == (0, 3)
    regions = {r["region"]: r for r in doc["regions"]}
    pc = regions["pcontrol-1"]["alloc_app_bytes"]
    assert (pc["min"], pc["max"], pc["ranks"]) == (14000, 14000, 4)

    text = heapscope("report", out).stdout
    rows = [l.split() for l in text.split("\nTimeline:")[0].splitlines() if l.startswith("  r")]
    assert [r[0] for r in rows if r[0].startswith("r") and r[0][1:].isdigit()] == ["r0", "r1", "r2", "r3"]
    killed = next(l for l in text.splitlines() if l.startswith("  killed"))
    assert "2" in killed.split("rank", 1)[1].split(" by")[0].strip("s ").split(", ")
    assert "killed:SIGTERM" in next(r for r in rows if r[0] == "r2")
    table = list(csv.DictReader(io.StringIO(heapscope("report", out, "--format", "csv").stdout)))
    got = {int(r["rank"]): int(r["value"]) for r in table
           if r["section"] == "rank" and r["metric"] == "alloc_app_bytes"}
    assert got == {r: v[0] for r, v in expected.items()}


def test_pre_exec_files_are_the_ranks_own_pids(killed_job, heapscope):
    """Recording mpirun, its forks write a file each before they exec the ranks: same pid
    as the rank, the launcher's name, no rank, an "exec" snapshot. The report says so
    instead of listing them as other programs."""
    _, out = killed_job
    files = [read_profile(f) for f in out.glob("*.hsp")]
    ranks = {p.rank: p for p in files if p.rank >= 0}
    launcher = {p.ppid for p in ranks.values()}
    assert len(launcher) == 1
    (launcher,) = launcher
    pre = {p.pid: p for p in files if p.rank < 0 and p.pid != launcher}
    assert sorted(pre) == sorted(p.pid for p in ranks.values())
    mpirun = next(p for p in files if p.pid == launcher)
    rank_of_pid = {p.pid: p for p in ranks.values()}
    for pid, p in pre.items():    # the launcher's image, before the rank's
        assert (p.snapshot_reason, p.ppid, p.exe) == ("exec", launcher, mpirun.exe)
        assert p.start_real_ns < rank_of_pid[pid].start_real_ns
    doc = json.loads(heapscope("report", out, "--format", "json").stdout)
    roles = sorted((o["role"], o["pid"], o["of_rank"], o["of_pid"]) for o in doc["others"])
    assert roles == [("launcher", launcher, None, None)] + sorted(
        ("pre-exec", p.pid, p.rank, p.pid) for p in ranks.values())
    text = heapscope("report", out).stdout.splitlines()
    other = [l for l in text if l.startswith("  other")]
    assert len(other) == 1 and other[0].startswith("  other     1 process that is not a rank")
    assert other[0].endswith(f"pid {launcher} (launcher)")
    pre_line = [l for l in text if l.startswith("  pre-exec")]
    assert len(pre_line) == 1 and "4 files of orterun written before they exec'd ranks 0, 1, 2, 3" \
        in pre_line[0]

def _synthetic_job(d, n, job="77"):
    """n ranks: rank r has 1000-byte blocks (r % 7 + 1) x 10 in the application, 64-byte
    blocks (r % 5 + 1) x 100 inside MPI calls, on host node<r % 4>."""
    for r in range(n):
        b = ProfileBuilder(pid=1000 + r, rank=r, host=f"node{r % 4:02d}", job_id=job,
                           exe="/apps/sim", cmdline=("/apps/sim",))
        b.snapshot(regions=[(1, 0, "[MPI]")],
                   sizes=[(0, 1000, (r % 7 + 1) * 10), (1, 64, (r % 5 + 1) * 100)])
        b.write(d / f"heapscope.{job}.r{r}.node{r % 4:02d}.{1000 + r}.hsp")
    launcher = ProfileBuilder(pid=999, exe="/usr/bin/orterun", cmdline=("mpirun",))
    launcher.snapshot(sizes=[(0, 24, 5)])
    launcher.write(d / "heapscope.node00.999.hsp")


def test_many_synthetic_ranks(tmp_path, heapscope):
    d = tmp_path / "job"
    d.mkdir()
    n = 100
    _synthetic_job(d, n)
    doc = json.loads(heapscope("report", d, "--format", "json").stdout)
    assert doc["ranks"] == n and doc["job_id"] == "77" and len(doc["others"]) == 1
    assert doc["hosts"] == ["node00", "node01", "node02", "node03"]
    app = {r: (r % 7 + 1) * 10 * 1000 for r in range(n)}
    mpi = {r: (r % 5 + 1) * 100 * 64 for r in range(n)}
    for key, values in (("alloc_app_bytes", app), ("alloc_mpi_bytes", mpi)):
        s = doc["stats"][key]
        lo = min(values, key=lambda r: (values[r], r))
        hi = max(values, key=lambda r: (values[r], -r))
        assert (s["min"], s["min_rank"], s["min_host"]) == (values[lo], lo, f"node{lo % 4:02d}")
        assert (s["max"], s["max_rank"], s["max_host"]) == (values[hi], hi, f"node{hi % 4:02d}")
        assert s["mean"] == pytest.approx(sum(values.values()) / n)
    assert [r["alloc_app_blocks"] for r in doc["per_rank"]] == [(r % 7 + 1) * 10 for r in range(n)]
    text = heapscope("report", d, "--ranks", "5").stdout
    assert f"... {n - 5} more ranks" in text
    # the size table of the merged ranks is still there
    sizes = json.loads(heapscope("report", d, "--by", "size", "--format", "json").stdout)
    assert sum(row["total_count"] for row in sizes["sizes"] if row["size"] == 1000) == \
        sum((r % 7 + 1) * 10 for r in range(n))


def test_job_report_errors(tmp_path, heapscope):
    d = tmp_path / "two"
    d.mkdir()
    _synthetic_job(d, 2, job="1")
    _synthetic_job(d, 2, job="2")
    res = heapscope("report", d, check=False)
    assert res.returncode == 2 and "ranks of 2 jobs" in res.stderr
    assert res.stderr.count("\n") == 1
    single = tmp_path / "single"
    single.mkdir()
    _synthetic_job(single, 1)
    for args, message in ((["--size", "12"], "--size applies to --by size"),
                          (["--top", "3"], "--top applies to --by size"),
                          (["--plot", tmp_path / "x.png"], "no timeline samples"),
                          (["--plot", tmp_path / "x.pdf"], "must end in .png or .svg"),
                          (["--points", "0"], "--points must be at least 1")):
        res = heapscope("report", single, *args, check=False)
        assert res.returncode == 2 and message in res.stderr and res.stderr.count("\n") == 1, res.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    ProfileBuilder().snapshot(sizes=[(0, 12, 3)]).write(plain / "a.hsp")
    res = heapscope("report", plain, "--by", "rank", check=False)
    assert res.returncode == 2 and "no MPI rank" in res.stderr


def test_job_timelines_plot_and_csv(killed_job, heapscope, tmp_path):
    _, out = killed_job
    svg = tmp_path / "job.svg"
    res = heapscope("report", out, "--plot", svg, "--points", "50", "--format", "json")
    doc = json.loads(res.stdout)
    import xml.etree.ElementTree as ET
    assert ET.parse(svg).getroot().tag.endswith("svg")
    tl = doc["timeline"]
    assert tl["points"] == 50 and len(tl["seconds"]) == 50
    assert [r["rank"] for r in tl["per_rank"]] == [0, 1, 2, 3]
    for key in ("app", "mpi"):
        assert tl["total"][key] == [sum(r[key][i] for r in tl["per_rank"]) for i in range(50)]
    # every rank's application peak appears in its own line (bins keep the largest value)
    for r in tl["per_rank"]:
        assert max(r["app"]) == doc["per_rank"][r["rank"]]["heap_app_peak"]
