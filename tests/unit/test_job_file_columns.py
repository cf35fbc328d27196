"""The job report of a job file by columns (analysis.job_columns), on a synthetic job
file of 1,500 rows written from the format table with known figures: every statistic,
host, rank row, missing rank and the JSON text are checked against values computed
here from the rows written, and against the general path (each row a RankSummary).

The rows are written out of rank order, with ties at the minimum and maximum (the lowest
rank must win), rows lacking figures (present bits), byte counts whose sum passes 2^63
(the mean must stay exact), rank numbers left out, and a job size above the highest rank."""
import json
import random

import pytest

from heapscope.analysis import job as job_analysis
from heapscope.analysis.job_loading import load_summaries, read_job
from heapscope.profile import format as fmt
from heapscope.profile.job_file import JobFile
from heapscope.render.job_text import render
from heapscope.render.json_text import json_default, to_json

from helpers.profile_builder import ProfileBuilder, chunk, header, payload

FIGURES = ("alloc_app_blocks", "alloc_mpi_blocks", "alloc_app_bytes", "alloc_mpi_bytes",
           "heap_peak", "heap_app_peak", "heap_mpi_peak", "rss_peak", "pss_peak", "mpi_rss",
           "mpi_pss")
HOSTS = ["n-a", "n-b", "n-c", "n-d", "n-e"]
SIZE = 1510                      # MPI_COMM_WORLD's size: ranks 1500..1509 have no row
LEFT_OUT = {7, 8, 900}           # rank numbers without a row


def _rows():
    rng = random.Random(5)
    ranks = [r for r in range(1500) if r not in LEFT_OUT]
    rng.shuffle(ranks)                               # file order is not rank order
    rows = []
    for r in ranks:
        present = 31 if r % 10 else rng.choice([1, 3, 7, 15, 0])
        figures = dict(alloc_app_blocks=rng.randint(1, 10**6), alloc_mpi_blocks=rng.randint(0, 10**4),
                       alloc_app_bytes=rng.randint(1, 1 << 55), alloc_mpi_bytes=rng.randint(0, 1 << 40),
                       heap_peak=rng.randint(1 << 20, 1 << 34), heap_app_peak=rng.randint(0, 1 << 33),
                       heap_mpi_peak=rng.randint(0, 1 << 30), rss_peak=rng.randint(1 << 24, 1 << 36),
                       pss_peak=rng.randint(1 << 23, 1 << 35), mpi_rss=rng.randint(0, 1 << 26),
                       mpi_pss=rng.randint(0, 1 << 25),
                       # JOB_RECORDER: the recorder's own peak, -1 where not measured
                       recorder_peak=rng.randint(1 << 20, 1 << 30) if present & 4 else -1)
        rows.append(dict(rank=r, host=(r * 7) % len(HOSTS) if r > 20 else 4, pid=20000 + r,
                         reason=fmt.REASON_API, present=present, kept=int(r % 250 == 3), **figures))
    # ties: ranks 1203 and 41 share the smallest RSS peak, 1311 and 55 the largest heap
    # peak (the higher rank first in the file: the lower must still be named)
    by_rank = {row["rank"]: row for row in rows}
    for r in (1203, 41):
        by_rank[r].update(present=31, rss_peak=1000)
    for r in (1311, 55):
        by_rank[r].update(present=31, heap_peak=1 << 40)
    return rows


def _metrics(row):
    """The report's figures of one row, from its present bits (profile_format.table)."""
    p, f = row["present"], row
    counts, heap, calipers = p & 1, p & 2, p & 16
    return dict(alloc_blocks=f["alloc_app_blocks"] + f["alloc_mpi_blocks"] if counts else None,
                alloc_app_blocks=f["alloc_app_blocks"] if counts else None,
                alloc_mpi_blocks=f["alloc_mpi_blocks"] if counts else None,
                alloc_bytes=f["alloc_app_bytes"] + f["alloc_mpi_bytes"] if counts else None,
                alloc_app_bytes=f["alloc_app_bytes"] if counts else None,
                alloc_mpi_bytes=f["alloc_mpi_bytes"] if counts else None,
                heap_peak=f["heap_peak"] if heap else None,
                heap_app_peak=f["heap_app_peak"] if heap else None,
                heap_mpi_peak=f["heap_mpi_peak"] if heap else None,
                rss_peak=f["rss_peak"] if p & 4 else None,
                pss_peak=f["pss_peak"] if p & 8 else None,
                mpi_rss=f["mpi_rss"] if calipers else None,
                mpi_pss=f["mpi_pss"] if calipers else None,
                recorder_peak=f["recorder_peak"] if f["recorder_peak"] >= 0 else None)


def _without_recorder(rows):
    """The JOB_RANKS rows (the recorder's peak is in JOB_RECORDER)."""
    return [{k: v for k, v in row.items() if k != "recorder_peak"} for row in rows]


def _write(directory, rows):
    hosts = []
    for h, name in enumerate(HOSTS):
        mine = [row for row in rows if row["host"] == h]
        rss = [row["rss_peak"] for row in mine if row["present"] & 4]
        pss = [row["pss_peak"] for row in mine if row["present"] & 8]
        hosts.append(dict(name=name, ranks=len(mine), reserved=0, rss_sum=sum(rss),
                          rss_max=max(rss, default=-1), pss_sum=sum(pss), pss_max=max(pss, default=-1)))
    parts = [("JOB", payload("JOB", ranks=SIZE, hosts=len(HOSTS), summarized=len(rows), reserved=0,
                             summary_ns=1_000_000, reduce_ns=3_000_000, job_id="77",
                             per_rank="5", recorder_version="0.1.0", exe="/apps/sim%d")),
             ("JOB_REGIONS", payload("JOB_REGIONS", regions=[dict(path="(none)"), dict(path="[MPI]")])),
             ("JOB_SIZE_COUNTS", payload("JOB_SIZE_COUNTS", rows=[
                 dict(region=0, reserved=0, size=64, count=3000),
                 dict(region=1, reserved=0, size=16, count=500)])),
             # two JOB_RANKS chunks, as the recorder writes past 65,536 rows
             ("JOB_RANKS", payload("JOB_RANKS", ranks=_without_recorder(rows[:1000]))),
             ("JOB_RANKS", payload("JOB_RANKS", ranks=_without_recorder(rows[1000:]))),
             ("JOB_HOSTS", payload("JOB_HOSTS", hosts=hosts)),
             ("JOB_RECORDER", payload("JOB_RECORDER", ranks=[
                 dict(rank=row["rank"], reserved=0, recorder_peak=row["recorder_peak"])
                 for row in rows]))]
    path = directory / "heapscope.77.job.hsj"
    path.write_bytes(header() + b"".join(chunk(name, p) for name, p in parts))
    return path, hosts


def _expected_stats(rows):
    out = {}
    for key, _, _ in job_analysis.METRICS:
        have = [(m[key], row["rank"], HOSTS[row["host"]]) for row in rows
                for m in [_metrics(row)] if m.get(key) is not None]
        if not have:
            continue
        lo = min(v for v, _, _ in have)
        hi = max(v for v, _, _ in have)
        lo_rank, lo_host = min((r, h) for v, r, h in have if v == lo)
        hi_rank, hi_host = min((r, h) for v, r, h in have if v == hi)
        out[key] = dict(min=lo, min_rank=lo_rank, min_host=lo_host, max=hi, max_rank=hi_rank,
                        max_host=hi_host, mean=sum(v for v, _, _ in have) / len(have),
                        ranks=len(have))
    return out


def _report(directory):
    jf = read_job([directory])
    return jf, job_analysis.build(load_summaries([directory], job=jf), job=jf)


def _as_list(doc):
    return dict(doc, per_rank=list(doc["per_rank"]))


def test_every_figure_of_a_job_file_by_columns(tmp_path):
    rows = _rows()
    path, hosts = _write(tmp_path, rows)
    jf, doc = _report(tmp_path)
    stats = _expected_stats(rows)
    assert doc["stats"] == stats
    # the ties went to the lower rank, and a sum past 2^63 kept an exact mean
    assert (stats["rss_peak"]["min_rank"], stats["heap_peak"]["max_rank"]) == (41, 55)
    assert sum(_metrics(r)["alloc_app_bytes"] or 0 for r in rows) > 1 << 63
    assert [m["key"] for m in doc["metrics"]] == list(stats)
    assert doc["ranks"] == len(rows) and doc["job_id"] == "77"
    assert doc["hosts"] == sorted(HOSTS) and doc["executables"] == ["/apps/sim%d"]
    assert doc["endings"]["missing"] == sorted(LEFT_OUT | set(range(1500, SIZE)))
    assert doc["no_snapshot"] == [] and doc["warnings"] == [] and doc["others"] == []
    expected_rows = []
    for row in sorted(rows, key=lambda r: r["rank"]):
        m = _metrics(row)
        expected_rows.append(dict(
            rank=row["rank"], host=HOSTS[row["host"]], pid=row["pid"], file=str(path), exe="/apps/sim%d",
            reason="finalize", complete=True, has_snapshot=True, heap_exact=False, mpi_layer=True,
            warnings=[], ended="finalize", signal=None, error_code=None, status=None, text="finalize",
            **{k: m[k] for k in stats}))
    assert len(doc["per_rank"]) == len(rows)
    assert list(doc["per_rank"]) == expected_rows
    assert doc["per_rank"][5] == expected_rows[5] and doc["per_rank"][-1] == expected_rows[-1]
    assert doc["per_rank"][10:13] == expected_rows[10:13]
    # the JSON written by columns: the same text as json.dumps of the plain list
    text = to_json(doc, compact=True)
    assert text == json.dumps(_as_list(doc), separators=(",", ":"), default=json_default) + "\n"
    assert json.loads(text)["per_rank"] == expected_rows
    assert json.loads(to_json(doc))["per_rank"] == expected_rows      # (indented: tolist())
    jd = doc["job_file"]
    assert jd["summarized"] == len(rows) and jd["size"] == SIZE
    assert jd["kept"] == [row["rank"] for row in rows if row["kept"]]          # in file order
    own = [[row["recorder_peak"] for row in rows if row["host"] == i and row["recorder_peak"] >= 0]
           for i in range(len(HOSTS))]
    assert jd["hosts"] == [dict(host=h["name"], ranks=h["ranks"], rss_sum=h["rss_sum"],
                                rss_max=h["rss_max"], pss_sum=h["pss_sum"], pss_max=h["pss_max"],
                                recorder_sum=sum(o) if o else None,
                                recorder_max=max(o) if o else None)
                           for h, o in zip(hosts, own)]
    assert [h["ranks"] for h in jd["hosts"]] == [sum(r["host"] == i for r in rows) for i in range(5)]
    out = render(doc)
    assert out == render(_as_list(doc))
    (rss,) = [line.split() for line in out.splitlines() if line.startswith("  RSS peak (sampled)")]
    assert rss[3:6] == ["1,000", "r41", HOSTS[41 * 7 % 5]]
    assert f"... {len(rows) - 64:,} more ranks" in out          # 64 rows shown by default


def test_the_general_path_gives_the_same_document(tmp_path, monkeypatch):
    """Counts past 2^62 make every row a RankSummary (the general code): the same
    document, figure by figure."""
    _write(tmp_path, _rows())
    _, columns = _report(tmp_path)

    def too_big(self):
        raise OverflowError("a count past 2^62")
    monkeypatch.setattr(JobFile, "rank_columns", too_big)
    _, objects = _report(tmp_path)
    assert objects["per_rank"]._block is None and len(objects["per_rank"]) == len(columns["per_rank"])
    assert _as_list(objects) == _as_list(columns)
    assert to_json(objects, compact=True) == to_json(columns, compact=True)


def test_rank_files_beside_the_job_file(tmp_path):
    """A kept rank file stands for its rank; a process whose parent is a row's pid is that
    rank's child; the rows they meet leave the block, the others stay columns."""
    rows = _rows()
    path, _ = _write(tmp_path, rows)
    kept = ProfileBuilder(pid=20003, ppid=1, rank=3, host=HOSTS[4], job_id="77", exe="/apps/sim%d")
    kept.snapshot(sizes=[(0, 1000, 5)])
    kept.write(tmp_path / f"heapscope.77.r3.{HOSTS[4]}.20003.hsp")
    row = next(r for r in rows if r["rank"] == 1234)
    child = ProfileBuilder(pid=31000, ppid=row["pid"], host=HOSTS[row["host"]], exe="/bin/sh")
    child.snapshot(sizes=[(0, 24, 1)])
    child.write(tmp_path / "heapscope.31000.hsp")
    _, doc = _report(tmp_path)
    per_rank = doc["per_rank"]
    assert len(per_rank) == len(rows) and per_rank._block is not None and len(per_rank._rows) == 2
    three = per_rank[3]
    assert (three["rank"], three["ended"], three["alloc_blocks"], three["alloc_bytes"]) == \
        (3, "exit", 5, 5000)
    assert three["file"].endswith(".r3.n-e.20003.hsp") and per_rank[4]["file"] == str(path)
    assert [r["rank"] for r in per_rank] == sorted(r["rank"] for r in rows)
    assert doc["others"] == [dict(pid=31000, ppid=row["pid"], rank=None, host=HOSTS[row["host"]],
                                  exe="/bin/sh", file=str(tmp_path / "heapscope.31000.hsp"),
                                  reason="exit", role="rank-child", of_rank=1234, of_pid=row["pid"])]
    # rank 3's own file replaces its row in the figures: 5 blocks is the fewest
    assert doc["stats"]["alloc_blocks"]["min"] == 5 and doc["stats"]["alloc_blocks"]["min_rank"] == 3
    text = to_json(doc, compact=True)
    assert text == json.dumps(_as_list(doc), separators=(",", ":"), default=json_default) + "\n"


@pytest.mark.parametrize("present", [0, 1])
def test_a_job_file_without_heap_figures(tmp_path, present):
    """Rows with no heap, RSS or PSS figures: those metrics are left out, not zero."""
    rows = [dict(r, present=present) for r in _rows()[:40]]
    rows[0]["present"] |= 4                          # one rank has an RSS peak
    _write(tmp_path, rows)
    _, doc = _report(tmp_path)
    keys = [m["key"] for m in doc["metrics"]]
    assert "heap_peak" not in keys and "pss_peak" not in keys and "rss_peak" in keys
    assert ("alloc_blocks" in keys) == bool(present)
    assert doc["stats"]["rss_peak"]["ranks"] == 1
