"""diff, export and callgraph on real recordings of the FEM workload (anomalous vs --fixed).

The fixed variant replaces the vectors of vectors and the per-element copies with flat
storage, so in region "local" the 24-byte blocks (a vector<double> of 3 coordinates)
vanish; the totals fall; --fail-if-more fails when the comparison is reversed.
"""
import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import require

CELLS = "16"


@pytest.fixture(scope="module")
def fem(native, tmp_path_factory, heapscope):
    root = tmp_path_factory.mktemp("fem")
    exe = native / "bin" / "hs-wl-fem-temporaries"
    heapscope("record", "-o", root / "anomalous", "--sizes", "24", "--regions", "local",
              "--", exe, "--cells", CELLS)
    heapscope("record", "-o", root / "fixed", "--", exe, "--cells", CELLS, "--fixed")
    return root


def report_counts(heapscope, path, size=None):
    args = ["report", path, "--format", "json"] + (["--size", size] if size else [])
    doc = json.loads(heapscope(*args).stdout)
    return {row["size"]: row["counts"] for row in doc["sizes"]}


def test_diff_per_size_and_fail_if_more(heapscope, fem):
    before = report_counts(heapscope, fem / "anomalous")
    after = report_counts(heapscope, fem / "fixed")
    assert before[24]["local"] > 0 and after.get(24, {}).get("local", 0) == 0
    res = heapscope("diff", fem / "anomalous", fem / "fixed", "--format", "json")
    doc = json.loads(res.stdout)
    row = next(r for r in doc["sizes"] if r["region"] == "local" and r["size"] == 24)
    assert (row["count_a"], row["count_b"], row["status"]) == (before[24]["local"], 0, "gone")
    total_before = sum(sum(c.values()) for c in before.values())
    total_after = sum(sum(c.values()) for c in after.values())
    assert total_after < total_before
    assert heapscope("diff", fem / "anomalous", fem / "fixed", "--fail-if-more", "5",
                     check=False).returncode == 0
    worse = heapscope("diff", fem / "fixed", fem / "anomalous", "--fail-if-more", "5", check=False)
    assert worse.returncode == 1 and "regression" in worse.stderr
    assert len(worse.stderr.strip().splitlines()) == 1


def test_collapsed_and_pprof_totals_equal_report(heapscope, fem, tmp_path):
    count = report_counts(heapscope, fem / "anomalous", "24")[24]["local"]
    heapscope("export", fem / "anomalous", "--format", "collapsed", "--size", "24",
              "-o", tmp_path / "c.txt")
    lines = (tmp_path / "c.txt").read_text().splitlines()
    assert lines and sum(int(line.rsplit(" ", 1)[1]) for line in lines) == count
    heapscope("export", fem / "anomalous", "--format", "pprof", "--size", "24",
              "-o", tmp_path / "p.pb.gz")
    go = require("go")   # Debian's golang-go: go tool pprof
    top = subprocess.run([go, "tool", "pprof", "-top", str(tmp_path / "p.pb.gz")],
                         capture_output=True, text=True, timeout=300)
    assert top.returncode == 0, top.stderr
    total = re.search(r"of (\d+) total", top.stdout)
    assert total and int(total.group(1)) == count


ANOMALOUS = Path(__file__).resolve().parents[2] / "workloads" / "fem-temporaries" / "anomalous.cc"
ELEMENTS = int(CELLS) ** 2 * 2   # two triangles per cell


def source_line(text):
    hits = [i + 1 for i, t in enumerate(ANOMALOUS.read_text().splitlines()) if text in t]
    assert len(hits) == 1, text
    return hits[0]


def callgraph_json(heapscope, fem, tmp_path, *extra):
    res = heapscope("callgraph", fem / "anomalous", "--size", "24", "--region", "local",
                    "--format", "json", "-o", tmp_path / "cg", *extra)
    return json.loads(res.stdout)


def short(function):
    return function.split("(", 1)[0]


def test_callgraph_ranks_user_code_and_dot_parses(heapscope, fem, tmp_path):
    """Per element, assembleLocal makes five 24-byte blocks (a vector<double>(3) of 3
    coordinates): elementStiffness's temporary row and the 3 rows copied from it, and
    elementLoad's vector; localPhase's solutions.push_back adds one. assembleLocal is
    the one user function shared by the three paths of those five blocks."""
    doc = callgraph_json(heapscope, fem, tmp_path)
    assert (doc["format"], doc["version"], doc["lines"]) == ("heapscope-callgraph", 1, False)
    assert (doc["types"], doc["count"], doc["bytes"]) == (4, 5 * ELEMENTS + 1, 24 * (5 * ELEMENTS + 1))
    ranked = [(short(v["function"]), v["types"], v["count"], v["bytes"]) for v in doc["ranking"]]
    assert ranked == [("anomalous::assembleLocal", 3, 5 * ELEMENTS, 24 * 5 * ELEMENTS),
                      ("anomalous::elementStiffness", 2, 4 * ELEMENTS, 24 * 4 * ELEMENTS),
                      ("anomalous::elementLoad", 1, ELEMENTS, 24 * ELEMENTS)]
    driver = [v for v in doc["vertices"] if short(v["function"]) == "anomalous::localPhase"]
    assert [(v["kind"], v["rank"], v["types"]) for v in driver] == [("trunk", None, 4)]
    text = heapscope("callgraph", fem / "anomalous", "--size", "24", "--region", "local",
                     "-o", tmp_path / "cg").stdout
    first = next(line for line in text.splitlines() if re.match(r"\s+1\s", line))
    assert first.split()[:3] == ["1", "3", f"{5 * ELEMENTS:,}"]
    assert first.split("  ")[-1].strip().startswith("anomalous::assembleLocal(Mesh const&")
    dot = subprocess.run(["dot", "-Tsvg", str(tmp_path / "cg.dot")], capture_output=True, text=True)
    assert dot.returncode == 0 and "<svg" in dot.stdout


def test_callgraph_lines_keeps_the_phase_driver_on_the_trunk(heapscope, fem, tmp_path):
    """With --lines, localPhase is two vertices (the assembleLocal call at one line, the
    push_back at another), neither on every path; they are still the phase driver's
    lines on the trunk, as localPhase is in the function view, and never ranked. The
    first target is the line that builds the rows of the element matrix."""
    doc = callgraph_json(heapscope, fem, tmp_path, "--lines")
    ranked = [(short(v["function"]), v["line"], v["types"], v["count"]) for v in doc["ranking"]]
    assert ranked == [
        ("anomalous::elementStiffness", source_line("Matrix ke(3, std::vector<double>(3));"), 2,
         4 * ELEMENTS),
        ("anomalous::assembleLocal", source_line("Matrix ke = elementStiffness(g, Kmat, area);"), 2,
         4 * ELEMENTS),
        ("anomalous::elementLoad", source_line("return std::vector<double>(3, f);"), 1, ELEMENTS),
        ("anomalous::assembleLocal", source_line("std::vector<double> fe = elementLoad(K, area);"), 1,
         ELEMENTS)]
    driver = sorted((v["line"], v["kind"], v["rank"], v["count"]) for v in doc["vertices"]
                    if short(v["function"]) == "anomalous::localPhase")
    assert driver == [(source_line("assembleLocal(mesh, sd, e, A, b);"), "trunk", None, 5 * ELEMENTS),
                      (source_line("solutions.push_back(x);"), "trunk", None, 1)]
    text = heapscope("callgraph", fem / "anomalous", "--size", "24", "--region", "local", "--lines",
                     "-o", tmp_path / "cgl").stdout
    assert "2 trunk vertices (on >= 95% of their thread's allocations, before its first branch)" in text
    first = next(line for line in text.splitlines() if re.match(r"\s+1\s", line))
    assert "anomalous::elementStiffness(" in first and "localPhase" not in first


def test_help_names_every_export_format(heapscope):
    text = heapscope("--help").stdout
    entry = " ".join(text[text.index("\n    export "):text.index("\n    bench ")].split())
    assert entry == ("export export stack trace types (collapsed stacks, pprof) or a process's heap "
                     "over time (Valgrind Massif)")
    assert "--format {collapsed,pprof,massif,json}" in heapscope("export", "--help").stdout


def test_pprof_value_bytes_is_the_default_sample_type(heapscope, fem, tmp_path):
    """--value bytes makes pprof show alloc_space unless told otherwise: its total is the
    recorded bytes of the size; --lines and --split are collapsed-only, a clear error."""
    count = report_counts(heapscope, fem / "anomalous", "24")[24]["local"]
    heapscope("export", fem / "anomalous", "--format", "pprof", "--size", "24",
              "--value", "bytes", "-o", tmp_path / "b.pb.gz")
    go = require("go")   # Debian's golang-go: go tool pprof
    top = subprocess.run([go, "tool", "pprof", "-top", "-unit", "B", str(tmp_path / "b.pb.gz")],
                         capture_output=True, text=True, timeout=300)
    assert top.returncode == 0, top.stderr
    total = re.search(r"of (\d+)B total", top.stdout)
    assert total and int(total.group(1)) == 24 * count
    for option, hint in (("--lines", "go tool pprof -lines"),
                         ("--split=region", "go tool pprof -tagroot")):
        res = heapscope("export", fem / "anomalous", "--format", "pprof", option,
                        "-o", tmp_path / "x.pb.gz", check=False)
        assert res.returncode != 0 and len(res.stderr.strip().splitlines()) == 1
        assert hint in res.stderr and "--format collapsed" in res.stderr
        assert not (tmp_path / "x.pb.gz").exists()
