"""`heapscope scaling` on a program whose per-rank memory follows known laws of the rank
count p (tests/programs/mpi_scaling_laws.c: a fixed table, a 1/p share of a fixed
problem, per-peer buffers), recorded with --track at 2, 4, 8 and 16 ranks under Open MPI
and MPICH, and at 32 ranks under Open MPI, once per session (the runs are shared).

Checked: each call path's law and coefficients are the program's, to the byte, and its
predictions at 32 and 64 ranks the known law's; the application's heap peak follows
1/p + p and its prediction at 32 ranks holds the real 32-rank run; the MPI library named
in every recording is the one the launcher reports; the two MPI libraries' memory side by
side is each run's own job report's; the memory limit's rank count agrees with the law;
different programs or inputs, too few rank counts and bad arguments are said in one line.
"""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import MPI_FAMILIES, require
from heapscope.profile import read_profile
from heapscope.profile.job_file import read_job_file
from heapscope.profile.mpi_library import of_profile

TABLE, PROBLEM, PEER = 3_000_000, 24_000_000, 65_536
COUNTS = (2, 4, 8, 16)
CHECK = 32              # the real larger run the predictions are checked against


def _record(program, mpi, n, out, *args):
    res = subprocess.run([sys.executable, "-m", "heapscope", "record", "--track", "--sizes",
                          "100000-100000000", "-o", out, "--", *mpi.mpirun(n), program, *args],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    return out


@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    """{"openmpi": {2: DIR, ..., 32: DIR}, "mpich": {2: DIR, ...}, "programs": {...}}"""
    tmp = tmp_path_factory.mktemp("scaling")
    out = dict(programs={})
    for name, mpi in MPI_FAMILIES.items():
        program = mpi.compile("mpi_scaling_laws.c", tmp / f"mpi_scaling_laws-{name}")
        out["programs"][name] = program
        counts = COUNTS + ((CHECK,) if name == "openmpi" else ())
        out[name] = {n: _record(program, mpi, n, tmp / f"{name}-p{n}") for n in counts}
    return out


def _scaling(heapscope, *args, fmt="json", check=True):
    res = heapscope("scaling", "--format", fmt, *map(str, args), check=check)
    return json.loads(res.stdout) if fmt == "json" and res.returncode == 0 else res


def _dirs(runs, name, counts=COUNTS):
    return [runs[name][n] for n in counts]


def _types(doc, function, line=None):
    return [t for t in doc["paths"][0]["types"] if t["frames"]
            and t["frames"][0]["function"] == function
            and (line is None or t["frames"][0]["line"] == line)]


def _component(doc, name, library=None):
    return next(c for c in doc["components"] if c["component"] == name
                and (library is None or c["mpi_library"].startswith(library)))


@pytest.mark.parametrize("name", list(MPI_FAMILIES))
def test_each_call_path_follows_its_known_law(runs, heapscope, name):
    doc = _scaling(heapscope, *_dirs(runs, name), "--predict", 32, 64)
    (table,) = _types(doc, "hold_table")
    (domain,) = _types(doc, "hold_domain")
    peers = _types(doc, "hold_peers")
    assert len(peers) == 2                          # the send and the receive area
    assert table["law"]["law"] == "constant"
    assert table["law"]["coefficients"]["a"] == pytest.approx(TABLE, abs=0.5)
    assert domain["law"]["law"] == "1/p"
    assert domain["law"]["coefficients"]["b"] == pytest.approx(PROBLEM, abs=0.5)
    assert domain["law"]["coefficients"]["a"] == pytest.approx(0, abs=0.5)
    for t in peers:
        assert t["law"]["law"] == "p"
        assert t["law"]["coefficients"]["b"] == pytest.approx(PEER, abs=0.5)
    # measured: the most one rank held, at each rank count
    assert [m["bytes_max"] for m in domain["measured"]] == [PROBLEM // n for n in COUNTS]
    assert [m["bytes_max"] for m in peers[0]["measured"]] == [n * PEER for n in COUNTS]
    # predicted at 32 and 64 ranks: the known law's, to the byte
    for t, law in ((table, lambda n: TABLE), (domain, lambda n: PROBLEM // n),
                   (peers[0], lambda n: n * PEER), (peers[1], lambda n: n * PEER)):
        assert [(p["ranks"], p["value"]) for p in t["law"]["predictions"]] == \
            [(n, law(n)) for n in (32, 64)]
        assert t["law"]["status"] == "chosen" and not t["law"]["rivals"]
        assert t["library"] == f"mpi_scaling_laws-{name}"


def test_predictions_hold_the_real_32_rank_run(runs, heapscope):
    doc = _scaling(heapscope, *_dirs(runs, "openmpi"), "--predict", CHECK, 64)
    app = _component(doc, "application")
    law = app["laws"]["heap_peak_per_rank"]
    # a fixed part, the domain share and two per-peer areas (a few bytes a peer more of
    # the application's own, outside MPI calls)
    assert law["law"] == "1/p + p"
    assert law["coefficients"]["b"] == pytest.approx(PROBLEM, rel=0.001)
    assert law["coefficients"]["c"] == pytest.approx(2 * PEER, rel=0.03)
    real = json.loads(heapscope("report", "--format", "json", runs["openmpi"][CHECK]).stdout)
    measured = real["stats"]["heap_app_peak"]["max"]
    (pred,) = [p for p in app["predictions"] if p["ranks"] == CHECK]
    assert pred["heap_peak_per_rank_low"] <= measured <= pred["heap_peak_per_rank_high"]
    assert abs(pred["heap_peak_per_rank"] - measured) < 0.001 * measured
    # and at 64 the law's growth from 32 on: b/64 - b/32 + 32 c
    (at64,) = [p for p in app["predictions"] if p["ranks"] == 64]
    step = at64["heap_peak_per_rank"] - pred["heap_peak_per_rank"]
    b, c = law["coefficients"]["b"], law["coefficients"]["c"]
    assert step == pytest.approx(b / 64 - b / 32 + 32 * c, abs=2)
    # the call paths' predictions against the real run's own peak types
    doc32 = _scaling(heapscope, *_dirs(runs, "openmpi", COUNTS + (CHECK,)))
    (domain,) = _types(doc32, "hold_domain")
    assert domain["measured"][-1] == dict(ranks=CHECK, bytes_max=PROBLEM // CHECK)


def _launcher_release(name):
    """The MPI library's release as its own tools say it."""
    if name == "openmpi":
        text = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout
        return "Open MPI", re.search(r"\(Open MPI\) (\S+)", text).group(1)
    text = subprocess.run([require("mpichversion")], capture_output=True, text=True).stdout
    return "MPICH", re.search(r"MPICH Version:\s*(\S+)", text).group(1)


@pytest.mark.parametrize("name", list(MPI_FAMILIES))
def test_every_recording_names_its_mpi_library(runs, name):
    impl, release = _launcher_release(name)
    out = runs[name][2]
    (job,) = out.glob("heapscope.*.job.hsj")
    jf = read_job_file(job)
    assert (jf.mpi_library.name, jf.mpi_library.release) == (impl, release)
    assert jf.mpi_library.version >= 3          # MPI_Get_library_version is MPI-3
    assert os.path.basename(jf.cmdline[0]) == f"mpi_scaling_laws-{name}"
    ranks = sorted(out.glob("heapscope.*.r*.hsp"))
    assert ranks
    for f in ranks:
        assert of_profile(read_profile(f)).text == jf.mpi_library.text


def test_two_mpi_libraries_side_by_side(runs, heapscope):
    doc = _scaling(heapscope, *_dirs(runs, "openmpi"), *_dirs(runs, "mpich"))
    (side,) = doc["side_by_side"]
    names = [lib.split()[0] for lib in side["libraries"]]
    assert names == ["MPICH", "Open"]
    assert [r["ranks"] for r in side["rows"]] == list(COUNTS)
    for name, i in (("mpich", 0), ("openmpi", 1)):
        for row in side["rows"]:
            report = json.loads(heapscope("report", "--format", "json", runs[name][row["ranks"]]).stdout)
            got = row["libraries"][i]
            assert got["heap_mpi_peak"] == report["stats"]["heap_mpi_peak"]["max"]
            assert got["mpi_rss"] == report["stats"]["mpi_rss"]["max"]
    # each library fitted on its own
    assert {c["mpi_library"].split()[0] for c in doc["components"]} == {"MPICH", "Open"}
    text = _scaling(heapscope, *_dirs(runs, "openmpi"), *_dirs(runs, "mpich"), fmt="text").stdout
    assert "MPI memory per rank, side by side" in text


def test_the_limit_is_crossed_where_the_law_says(runs, heapscope):
    doc = _scaling(heapscope, *_dirs(runs, "openmpi"), "--limit", "64MiB")
    (lim,) = doc["limits"]
    comp = _component(doc, "total")
    law = comp["laws"][lim["field"]]
    coef = law["coefficients"]
    terms = dict(constant=lambda p: 0, **{"1/p": lambda p: coef["b"] / p,
                                         "p": lambda p: coef["b"] * p,
                                         "1/p + p": lambda p: coef["b"] / p + coef["c"] * p})
    assert law["law"] in terms, law["law"]
    y = lambda p: coef["a"] + terms[law["law"]](p)
    limit = 64 * 1024 * 1024
    if lim["ranks"] is None:
        assert law["law"] in ("constant", "1/p") and y(1 << 30) <= limit
    else:
        assert y(lim["ranks"]) > limit >= y(lim["ranks"] - 1)
        assert lim["ranks"] > 16
    assert doc["limit"] == dict(bytes=limit, source="--limit")


def test_by_library_and_csv_and_text(runs, heapscope):
    dirs = _dirs(runs, "openmpi")
    doc = _scaling(heapscope, *dirs, "--by-library")
    lib = _component(doc, "library mpi_scaling_laws-openmpi")
    assert lib["laws"]["heap_peak_per_rank"]["law"] == "1/p + p"
    # per rank, the mean over the ranks tracked of what the program's types held
    for m in lib["measured"]:
        jf = read_job_file(next(runs["openmpi"][m["ranks"]].glob("*.job.hsj")))
        ps = jf.peak_stacks
        own = [t.bytes for t in ps.types if t.frames and
               ps.modules[t.frames[0][0]][0].endswith("mpi_scaling_laws-openmpi")]
        assert m["heap_peak_per_rank"] == round(sum(own) / ps.ranks_tracked)
    rows = list(csv.DictReader(io.StringIO(_scaling(heapscope, *dirs, fmt="csv").stdout)))
    predicted = [r for r in rows if r["section"] == "path" and r["kind"] == "predicted"
                 and r["component"].startswith("hold_domain")]
    assert [(int(r["ranks"]), int(r["value"])) for r in predicted] == \
        [(32, PROBLEM // 32), (64, PROBLEM // 64)]
    text = _scaling(heapscope, *dirs, fmt="text").stdout
    assert re.search(r"1/p\s+hold_domain:\d+ < main", text)
    assert "application heap peak" in text


def test_scaling_html_page(runs, heapscope, tmp_path):
    page = tmp_path / "scaling.html"
    heapscope("scaling", *_dirs(runs, "openmpi"), "--html", page)
    text = page.read_text()
    data = json.loads(re.search(r'id="hs-data">(.*?)</script>', text, re.S).group(1))
    laws = data["scaling"]["components"][0]["laws"]["heap_peak_per_rank"]
    assert laws["curve"][0]["ranks"] == 2 and laws["curve"][-1]["ranks"] == 64
    assert "HS.sections.scaling" in text


def test_too_few_rank_counts_choose_no_law(runs, heapscope):
    doc = _scaling(heapscope, runs["openmpi"][2], runs["openmpi"][4])
    (domain,) = _types(doc, "hold_domain")
    assert domain["law"]["status"] == "too-few-points"
    assert {f["law"] for f in domain["law"]["through_points"]} >= {"1/p"}
    text = _scaling(heapscope, runs["openmpi"][2], runs["openmpi"][4], fmt="text").stdout
    assert "no law chosen: 2 rank counts" in text


def test_different_programs_or_inputs_are_refused(runs, heapscope, tmp_path):
    mpi = MPI_FAMILIES["openmpi"]
    other = tmp_path / "another_program"
    shutil.copy(runs["programs"]["openmpi"], other)
    renamed = _record(other, mpi, 2, tmp_path / "other")
    res = _scaling(heapscope, renamed, *_dirs(runs, "openmpi"), check=False)
    assert res.returncode != 0 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "different programs" in res.stderr
    argued = _record(runs["programs"]["openmpi"], mpi, 2, tmp_path / "argued", "size=7")
    res = _scaling(heapscope, argued, *_dirs(runs, "openmpi"), check=False)
    assert res.returncode != 0 and res.stderr.count("\n") == 1
    assert "different inputs" in res.stderr and "--by VAR" in res.stderr
    # named with --by, the variable is the problem size: fitted apart, not refused
    doc = _scaling(heapscope, argued, *_dirs(runs, "openmpi"), "--by", "size", check=False)
    assert doc.returncode != 0 and "no size in its command line" in doc.stderr


@pytest.mark.parametrize("args, message", [
    (("{a}",), "two recordings or more"),
    (("{a}", "/nonexistent/dir"), "no such file or directory"),
    (("{a}", "{b}", "--limit", "lots"), "bad --limit"),
    (("{a}", "{b}", "--predict", "0"), "bad --predict"),
])
def test_bad_arguments_are_one_line(runs, heapscope, args, message):
    a, b = runs["openmpi"][2], runs["openmpi"][4]
    res = heapscope("scaling", *[x.format(a=a, b=b) for x in args], check=False)
    assert res.returncode != 0 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and message in res.stderr, res.stderr
