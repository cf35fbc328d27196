"""diff, export and callgraph on real recordings of the FEM workload (anomalous vs --fixed).

The fixed variant replaces the vectors of vectors and the per-element copies with flat
storage, so in region "local" the 24-byte blocks (a vector<double> of 3 coordinates)
vanish; the totals fall; --fail-if-more fails when the comparison is reversed.
"""
import json
import re
import shutil
import subprocess

import pytest

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
    go = shutil.which("go") or "/usr/local/go/bin/go"
    top = subprocess.run([go, "tool", "pprof", "-top", str(tmp_path / "p.pb.gz")],
                         capture_output=True, text=True, timeout=300)
    assert top.returncode == 0, top.stderr
    total = re.search(r"of (\d+) total", top.stdout)
    assert total and int(total.group(1)) == count


def test_callgraph_ranks_user_code_and_dot_parses(heapscope, fem, tmp_path):
    res = heapscope("callgraph", fem / "anomalous", "--size", "24", "--region", "local",
                    "-o", tmp_path / "cg")
    ranked = [line for line in res.stdout.splitlines() if re.match(r"\s+1\s", line)]
    assert ranked and "anomalous::" in ranked[0] and "std::" not in ranked[0].split("@")[0]
    dot = subprocess.run(["dot", "-Tsvg", str(tmp_path / "cg.dot")], capture_output=True, text=True)
    assert dot.returncode == 0 and "<svg" in dot.stdout
