"""The job file (heapscope.<job>.job.hsj), reduced inside the job at MPI_Finalize, checked
against the rank files of the same run (tests/programs/mpi_job_ranks.c on 4 ranks: rank r
keeps r + 1 blocks of 1,000,000 bytes and 2 of 7000 in region "pcontrol-1").

The job file's figures are those of each rank's dump at MPI_Finalize (the rank file's
first snapshot, reason "api"), so each rank file is cut after that snapshot and read as
the job report reads rank files (analysis.job.summarize): every figure must be equal,
and so must the counts per (region, size) and per (region, API) summed over the ranks,
and the per-host sums and maxima of the RSS and PSS peaks."""
import json
import subprocess
import sys

import pytest

from conftest import MPI_FAMILIES
from heapscope.analysis.job import summarize
from heapscope.profile import format as fmt
from heapscope.profile import read_profile
from heapscope.profile.framing import parse
from heapscope.profile.job_file import read_job_file
from helpers.rank_files import at_finalize


def _record(mpi, tmp, *options, mode=()):
    program = mpi.compile("mpi_job_ranks.c", tmp / "mpi_job_ranks")
    out = tmp / "out"
    res = subprocess.run([sys.executable, "-m", "heapscope", "record", *options, "-o", out, "--",
                          *mpi.mpirun(4), program, *mode],
                         capture_output=True, text=True, timeout=240)
    return program, out, res


@pytest.fixture(scope="module", params=list(MPI_FAMILIES))
def job_all(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"job-{request.param}")
    program, out, res = _record(MPI_FAMILIES[request.param], tmp, "--per-rank", "all")
    assert res.returncode == 0, res.stderr
    return program, out, tmp


def test_every_figure_of_the_job_file_equals_the_rank_files(job_all):
    program, out, tmp = job_all
    (job_path,) = out.glob("heapscope.*.job.hsj")
    job = read_job_file(job_path)
    cuts = tmp / "cuts"
    cuts.mkdir(exist_ok=True)
    ranks = {p.rank: p for p in (at_finalize(f, cuts) for f in out.glob("heapscope.*.r*.hsp"))}
    assert sorted(ranks) == [0, 1, 2, 3] and job.size == 4
    assert job.exe == str(program) and job.per_rank == "all"
    assert [r.rank for r in job.ranks] == [0, 1, 2, 3] and all(r.kept for r in job.ranks)
    sizes, apis = {}, {}
    for rank, p in ranks.items():
        row = job.ranks[rank]
        s = summarize(p)
        assert (row.host, row.pid, row.reason) == (p.host, p.pid, "api")
        assert row.metrics == s.metrics, rank
        # the program's own blocks are there (the figures are not both wrong the same way)
        assert p.size_counts[("(none)", 1000000)] == rank + 1
        assert row.metrics["alloc_app_bytes"] >= (rank + 1) * 1000000 + 14000
        assert row.metrics["alloc_mpi_blocks"] > 0 and row.metrics["rss_peak"] > 0
        # the recorder's own memory, apart: RSS/PSS peaks are net of it (equal to the rank
        # file's, whose samples the reader nets the same way)
        assert row.metrics["recorder_peak"] > 0, rank
        for k, n in p.size_counts.items():
            sizes[k] = sizes.get(k, 0) + n
        for k, n in p.api_counts.items():
            apis[k] = apis.get(k, 0) + n
    assert job.size_counts == sizes
    assert job.size_counts[("(none)", 1000000)] == 1 + 2 + 3 + 4
    assert job.size_counts[("pcontrol-1", 7000)] == 8
    assert job.api_counts == apis
    hosts = {}
    for r in job.ranks:
        h = hosts.setdefault(r.host, dict(host=r.host, ranks=0, rss_sum=0, rss_max=0,
                                          pss_sum=0, pss_max=0, recorder_sum=0, recorder_max=0))
        h["ranks"] += 1
        for k in ("rss", "pss", "recorder"):
            h[f"{k}_sum"] += r.metrics[f"{k}_peak"]
            h[f"{k}_max"] = max(h[f"{k}_max"], r.metrics[f"{k}_peak"])
    assert job.hosts == list(hosts.values())


def test_the_recorders_job_file_decodes_whole(job_all):
    """Every chunk of the C writer's job file is a JOB* chunk of the table, in the
    documented order, decodes with no byte left over and encodes back to its bytes."""
    _, out, _ = job_all
    (path,) = out.glob("heapscope.*.job.hsj")
    frame = parse(path.read_bytes(), str(path))
    assert frame.truncated_at is None
    names = []
    for c in frame.chunks:
        codec = fmt.CODECS[c.type]
        assert codec.encode(codec.decode(c.payload, whole=True)) == bytes(c.payload)
        names.append(fmt.chunk_name(c.type))
    assert names == ["JOB", "JOB_REGIONS", "JOB_SIZE_COUNTS", "JOB_API_COUNTS", "JOB_RANKS",
                     "JOB_HOSTS", "JOB_PEAK_STACKS", "JOB_RECORDER", "JOB_MPI_LIBRARY",
                     "JOB_COMMAND"]


def test_the_job_report_with_every_rank_file_kept(job_all, heapscope):
    """Every rank kept its file: the report's rows are the files' (their exit snapshots
    also count what MPI_Finalize allocated), the job file adds its regions; per host the
    ranks' RSS and PSS peaks (the program's) and recorder peaks of the rows shown (the job file's JOB_HOSTS, summed at
    MPI_Finalize, would differ from the files' later samples)."""
    _, out, _ = job_all
    job = read_job_file(next(out.glob("heapscope.*.job.hsj")))
    doc = json.loads(heapscope("report", out, "--format", "json").stdout)
    assert doc["job_file"]["path"] == job.path and doc["ranks"] == 4
    assert doc["job_file"]["kept"] == [0, 1, 2, 3]
    [host] = doc["job_file"]["hosts"]
    rows = doc["per_rank"]
    assert host == dict(host=rows[0]["host"], ranks=4, rss_sum=sum(r["rss_peak"] for r in rows),
                        rss_max=max(r["rss_peak"] for r in rows), pss_sum=sum(r["pss_peak"] for r in rows),
                        pss_max=max(r["pss_peak"] for r in rows),
                        recorder_sum=sum(r["recorder_peak"] for r in rows),
                        recorder_max=max(r["recorder_peak"] for r in rows))
    assert 0 < host["recorder_max"] < host["rss_max"]
    assert [h["host"] for h in job.hosts] == [host["host"]] and job.hosts[0]["ranks"] == 4
    files = {p.rank: p for p in map(read_profile, out.glob("heapscope.*.r*.hsp"))}
    for row in doc["per_rank"]:
        assert row["ended"] == "exit" and row["file"] == files[row["rank"]].path
        assert row["alloc_app_bytes"] == summarize(files[row["rank"]]).metrics["alloc_app_bytes"]
    regions = {g["region"]: g for g in doc["job_file"]["regions"]}
    assert regions["pcontrol-1"]["alloc_app_bytes"] == 8 * 7000
    assert "From the job file" in heapscope("report", out).stdout


def test_per_rank_none_leaves_only_the_job_file(heapscope, tmp_path):
    program, out, res = _record(MPI_FAMILIES["openmpi"], tmp_path, "--per-rank", "none")
    assert res.returncode == 0, res.stderr
    assert not list(out.glob("heapscope.*.r*.hsp"))
    (job_path,) = out.glob("heapscope.*.job.hsj")
    job = read_job_file(job_path)
    assert [r.rank for r in job.ranks] == [0, 1, 2, 3] and not any(r.kept for r in job.ranks)
    assert job.size_counts[("(none)", 1000000)] == 10
    doc = json.loads(heapscope("report", out, "--format", "json").stdout)
    assert [r["rank"] for r in doc["per_rank"]] == [0, 1, 2, 3]
    for row, r in zip(doc["per_rank"], job.ranks):     # the job file's rows, figure by figure
        assert row["ended"] == "finalize" and row["file"] == job.path
        assert all(row[k] == v for k, v in r.metrics.items() if k in row)
    assert doc["per_rank"][3]["alloc_app_bytes"] >= 4 * 1000000 + 14000


def test_default_keeps_the_extreme_ranks(tmp_path):
    _, out, res = _record(MPI_FAMILIES["openmpi"], tmp_path, "--per-rank", "1")
    assert res.returncode == 0, res.stderr
    job = read_job_file(next(out.glob("heapscope.*.job.hsj")))
    kept = {r.rank for r in job.ranks if r.kept}
    # 1 sampled (rank 0) + the min and max of each figure: rank 3 holds the most bytes
    assert {0, 3} <= kept
    for key in ("alloc_bytes", "alloc_blocks", "heap_peak", "rss_peak", "pss_peak"):
        values = [(r.metrics[key], r.rank) for r in job.ranks if r.metrics[key] is not None]
        assert min(values)[1] in kept and max(values, key=lambda v: (v[0], -v[1]))[1] in kept
    files = {int(f.name.split(".r")[1].split(".")[0]) for f in out.glob("heapscope.*.r*.hsp")}
    assert files == kept


def test_a_crashed_rank_keeps_its_file_with_per_rank_none(tmp_path):
    # rank 1 segfaults: no rank reaches MPI_Finalize, no job file, every file is kept
    _, out, res = _record(MPI_FAMILIES["openmpi"], tmp_path, "--per-rank", "none", mode=("segv",))
    assert res.returncode != 0
    assert not list(out.glob("heapscope.*.job.hsj"))
    crashed = [read_profile(f) for f in out.glob("heapscope.*.r1.*.hsp")]
    assert [p.snapshot_reason for p in crashed] == ["crash"]
    assert crashed[0].size_counts[("(none)", 1000000)] == 2


def test_bad_per_rank_is_one_line(heapscope):
    res = heapscope("record", "--per-rank", "some", "--", "true", check=False)
    assert res.returncode != 0 and "bad --per-rank 'some'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("family", list(MPI_FAMILIES))
def test_caliper_figures_are_peaks_when_a_call_gives_memory_back(family, tmp_path):
    """mpi_caliper_fall.c: MPI_Win_free unmaps a 16 MiB shared window touched outside MPI
    calls, so the calipers' running sum ends far below its peak. The job file's mpi_rss and
    mpi_pss are the peaks, as each rank file's reader computes them (the job row once took
    the net sum: -13 MB here against a peak of +4.6 MB)."""
    import os
    mpi = MPI_FAMILIES[family]
    program = mpi.compile("mpi_caliper_fall.c", tmp_path / "mpi_caliper_fall")
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "heapscope", "record", "--per-rank", "all",
                          "-o", out, "--", *mpi.mpirun(2), program],
                         capture_output=True, text=True, timeout=240,
                         env=dict(os.environ, HEAPSCOPE_CALIPER_MS="0"))
    assert res.returncode == 0, res.stderr
    (job_path,) = out.glob("heapscope.*.job.hsj")
    rows = {r.rank: r for r in read_job_file(job_path).ranks}
    ranks = {p.rank: p for p in (at_finalize(f, tmp_path) for f in out.glob("heapscope.*.r*.hsp"))}
    assert sorted(ranks) == sorted(rows) == [0, 1]
    for rank, p in ranks.items():
        tl = p.timeline
        want = summarize(p).metrics
        # the net sum fell well below its peak (by the window: 13 MB under Open MPI, 4 MB
        # under MPICH, which keeps part of it)
        assert tl.mpi_rss_delta_bytes < want["mpi_rss"] - (2 << 20) and want["mpi_rss"] >= 0
        assert (rows[rank].metrics["mpi_rss"], rows[rank].metrics["mpi_pss"]) == \
            (want["mpi_rss"], want["mpi_pss"]), rank
