"""The output grammar report, stacks, callgraph, diff and export share (commands/options.py):
`--format json -o FILE` writes exactly what standard output gets and nothing else; --top
is 20 unless given (0 = all); callgraph draws only where asked (--dot, --svg, --plot) and
keeps the old `-o PREFIX` for one release with a note; a bad option is one stderr line.

The profile is tests/programs/diff_variant.c ("before") recorded with every stack: 300
blocks of 12 bytes (make_pairs) and 100 of 40 (make_nodes) in region build, 50 of 64
(make_temps) and 20 of 16 (make_scratch) in region solve.
"""
import json
import os
from pathlib import Path

import pytest

import heapscope as package
from helpers.profile_builder import ProfileBuilder

# The package under test, for runs in another directory (a relative PYTHONPATH would miss it).
PACKAGE_ROOT = str(Path(package.__file__).resolve().parents[1])


@pytest.fixture
def run_in_tmp(heapscope, tmp_path):
    """heapscope(...) with tmp_path as the current directory: what lands there is seen."""
    path = os.pathsep.join(filter(None, [PACKAGE_ROOT, os.environ.get("PYTHONPATH")]))
    return lambda *args, check=True: heapscope(*args, check=check, cwd=tmp_path,
                                              env={"PYTHONPATH": path})


@pytest.fixture(scope="module")
def prof(build, heapscope, tmp_path_factory):
    out = tmp_path_factory.mktemp("grammar") / "prof"
    heapscope("record", "-o", out, "--sizes", "all", "--", build("diff_variant.c"))
    return out


def check_figures(name, doc):
    """One known figure of each document, so that an empty or wrong document fails."""
    if name == "report":
        assert {(r["size"], r["total_count"]) for r in doc["sizes"]} >= {(12, 300), (40, 100),
                                                                        (64, 50), (16, 20)}
    elif name == "report-library":
        assert doc["totals"]["count"] >= 470 and doc["libraries"]
    elif name == "stacks":
        assert [(g["size"], g["region"], g["count"]) for g in doc["groups"]] == [
            (12, "build", 300), (40, "build", 100)]
    elif name == "callgraph":
        assert (doc["count"], doc["bytes"]) == (300, 3600) and doc["ranking"]
        assert (doc["dot"], doc["svg"]) == (None, None)   # nothing drawn unasked
    elif name == "diff":
        t = doc["total"]
        assert t["count_a"] == t["count_b"] >= 470 and t["delta"] == 0
        assert {(r["region"], r["size"], r["count_a"]) for r in doc["sizes"]} >= {
            ("build", 12, 300), ("solve", 64, 50)}
    elif name == "export":
        assert doc["totals"] == dict(types=1, count=300, bytes=3600)
        [s] = doc["stacks"]
        assert (s["region"], s["size"], s["count"]) == ("build", 12, 300)
        assert "make_pairs" in [f["function"] for f in s["frames"]]


JSON_COMMANDS = {
    "report": (["report", "{p}"], "heapscope-report"),
    "report-library": (["report", "{p}", "--by", "library"], "heapscope-libraries"),
    "stacks": (["stacks", "{p}", "--size", "12,40"], "heapscope-stacks"),
    "callgraph": (["callgraph", "{p}", "--size", "12"], "heapscope-callgraph"),
    "diff": (["diff", "{p}", "{p}", "--stacks"], "heapscope-diff"),
    "export": (["export", "{p}", "--size", "12"], "heapscope-export"),
}


@pytest.mark.parametrize("name", sorted(JSON_COMMANDS))
def test_json_to_a_file_is_what_stdout_gets(name, prof, run_in_tmp, tmp_path):
    args, fmt = JSON_COMMANDS[name]
    args = [a.format(p=prof) for a in args]
    doc = json.loads(run_in_tmp(*args, "--format", "json").stdout)
    assert (doc["format"], doc["version"]) == (fmt, 1)
    check_figures(name, doc)
    res = run_in_tmp(*args, "--format", "json", "-o", "result.json")
    assert res.stdout == "" and "deprecated" not in res.stderr
    assert json.loads((tmp_path / "result.json").read_text()) == doc
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]   # nothing else written


def test_callgraph_draws_only_where_asked(prof, run_in_tmp, tmp_path):
    text = run_in_tmp("callgraph", prof, "--size", "12").stdout
    assert text.startswith("Call graph of size 12: 1 stack trace type, 300 allocations, 3,600 bytes")
    assert "wrote" not in text and list(tmp_path.iterdir()) == []

    text = run_in_tmp("callgraph", prof, "--size", "12", "--dot", "g.dot", "--svg", "g.svg").stdout
    assert text.splitlines()[-2:] == ["wrote g.dot", "wrote g.svg"]
    assert (tmp_path / "g.dot").read_text().startswith("digraph heapscope_callgraph {")
    assert "make_pairs" in (tmp_path / "g.dot").read_text()
    assert "<svg" in (tmp_path / "g.svg").read_text()

    run_in_tmp("callgraph", prof, "--size", "12", "--plot", "p.svg", "--format", "json",
              "-o", "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    assert (doc["dot"], doc["svg"]) == (None, "p.svg") and "<svg" in (tmp_path / "p.svg").read_text()
    run_in_tmp("callgraph", prof, "--size", "12", "--plot", "p.dot")
    assert (tmp_path / "p.dot").read_text() == (tmp_path / "g.dot").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.dot", "g.svg", "p.dot", "p.svg", "r.json"]


def test_callgraph_old_prefix_spelling_still_works_with_a_note(prof, heapscope, tmp_path):
    """-o PREFIX (no .txt/.json suffix): PREFIX.dot and PREFIX.svg, the result on stdout,
    and one note naming the new spelling; the figures are the new spelling's."""
    prefix = tmp_path / "cg"
    res = heapscope("callgraph", prof, "--size", "12", "--format", "json", "-o", prefix)
    old = json.loads(res.stdout)
    assert (old["dot"], old["svg"]) == (f"{prefix}.dot", f"{prefix}.svg")
    assert "digraph" in (tmp_path / "cg.dot").read_text() and (tmp_path / "cg.svg").exists()
    [note] = res.stderr.strip().splitlines()
    assert note.startswith("heapscope: note: callgraph -o PREFIX") and "deprecated" in note
    assert f"--dot {prefix}.dot --svg {prefix}.svg" in note
    new = json.loads(heapscope("callgraph", prof, "--size", "12", "--format", "json").stdout)
    drawing = ("dot", "svg", "drawn")   # what was drawn, not the figures
    assert old["drawn"] == {"vertices": 6, "hidden_vertices": 0, "hidden_edges": 0}
    assert new["drawn"] is None
    assert {k: v for k, v in old.items() if k not in drawing} == \
           {k: v for k, v in new.items() if k not in drawing}


@pytest.mark.parametrize("args,message", [
    (["-o", "x.svg"], "-o takes the result (FILE.txt or FILE.json); draw the graph with --svg x.svg"),
    (["-o", "x.dot"], "draw the graph with --dot x.dot"),
    (["-o", "x", "--svg", "a.svg"], "-o takes the result file and needs a .txt or .json suffix"),
    (["--plot", "a.png"], "the suffix says what to draw, .dot or .svg"),
    (["--plot", "a.svg", "--svg", "b.svg"], "both name the .svg file"),
    (["--top", "-1"], "--top must not be negative (got '-1')"),
])
def test_callgraph_output_errors_are_one_line(args, message, prof, run_in_tmp, tmp_path):
    res = run_in_tmp("callgraph", prof, "--size", "12", *args, check=False)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.splitlines() == [f"heapscope: error: {res.stderr.split('error: ', 1)[1].strip()}"]
    assert message in res.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args,message", [
    (["stacks", "{p}", "--size", "12", "--depth", "-1"], "--depth must not be negative (got '-1')"),
    (["diff", "{p}", "{p}", "--top", "x"], "bad --top 'x': expected a whole number"),
    (["report", "{p}", "--hot", "-2"], "--hot must not be negative (got '-2')"),
    (["report", "{p}", "--by", "library", "--top", "0"], "--top applies to --by size"),
    (["export", "{p}", "--format", "json", "--lines"], "--lines and --split are for --format collapsed"),
])
def test_option_errors_are_one_line(args, message, prof, heapscope):
    res = heapscope(*[a.format(p=prof) for a in args], check=False)
    assert res.returncode == 2 and res.stdout == ""
    [line] = res.stderr.splitlines()
    assert line.startswith("heapscope: error: ") and message in line


def many_sizes(tmp_path):
    """25 sizes (1..25 bytes) in one region, size s allocated 100 + s times; 25 stack
    trace types of size 8, type k with k frames and k allocations."""
    b = ProfileBuilder(stack_sizes="8")
    b.snapshot(sizes=[(0, s, 100 + s) for s in range(1, 26)],
               stacks=[(0, 8, k, 8 * k, tuple(0x1000 + 16 * i for i in range(k))) for k in range(1, 26)])
    return b.write(tmp_path / "many.hsp")


def test_top_is_20_unless_given(tmp_path, heapscope):
    path = many_sizes(tmp_path)
    doc = json.loads(heapscope("report", path, "--format", "json").stdout)
    assert doc["filters"]["top"] == 20 and doc["distinct_sizes"] == 25
    assert [r["size"] for r in doc["sizes"]] == list(range(25, 5, -1))   # most allocations first
    assert "(20 of 25 sizes, most allocations first)" in heapscope("report", path).stdout
    doc = json.loads(heapscope("report", path, "--top", "0", "--format", "json").stdout)
    assert [r["size"] for r in doc["sizes"]] == list(range(1, 26))       # every size, by size

    doc = json.loads(heapscope("stacks", path, "--size", "8", "--format", "json").stdout)
    [g] = doc["groups"]
    assert (doc["filters"]["top"], g["types"], len(g["stack_types"])) == (20, 25, 20)
    assert [t["count"] for t in g["stack_types"]] == list(range(25, 5, -1))
    assert "(20 of 25 types shown; --top N shows more, --top 0 all)" in \
        heapscope("stacks", path, "--size", "8").stdout
    doc = json.loads(heapscope("stacks", path, "--size", "8", "--top", "0", "--format", "json").stdout)
    assert len(doc["groups"][0]["stack_types"]) == 25
