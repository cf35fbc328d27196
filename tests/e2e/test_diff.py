"""`heapscope diff` end to end on tests/programs/diff_variant.c: the program as is (A, before)
and built with -DFIXED (B, after), each at before/diff_variant and after/diff_variant (two
builds of one program, as a developer keeps them). The expected figures are the table in
the program's header: per size and region, the migrations, per stack trace type matched by
symbolized frames, the path whose size changed, and the --fail-if-more exit codes."""
import csv
import io
import json
from pathlib import Path

import pytest

from conftest import compile_program
from helpers.diff_variant import SIZES, SOURCE, STACKS, line_of

@pytest.fixture(scope="module")
def runs(native, heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("diff")
    for side, flags in (("before", ()), ("after", ("-DFIXED",))):
        (root / side).mkdir()
        exe = compile_program(native, "diff_variant.c", root / side / "diff_variant", *flags)
        heapscope("record", "-o", root / f"prof-{side}", "--sizes", "all", "--", exe)
    return root / "prof-before", root / "prof-after"


@pytest.fixture(scope="module")
def renamed(native, heapscope, runs):
    """The fixed build under another name, from a copy of the source in another
    directory: as a developer keeps two checkouts and their programs side by side."""
    root = runs[0].parent
    checkout = root / "checkout2"
    checkout.mkdir()
    (checkout / SOURCE.name).write_text(SOURCE.read_text())
    exe = compile_program(native, checkout / SOURCE.name, root / "after" / "diff_variant_fixed",
                          "-DFIXED")
    heapscope("record", "-o", root / "prof-renamed", "--sizes", "all", "--", exe)
    return root / "prof-renamed"


def diff_json(heapscope, a, b, *extra):
    return json.loads(heapscope("diff", a, b, "--format", "json", *extra).stdout)


def test_sizes_totals_and_migrations(heapscope, runs):
    a, b = runs
    doc = diff_json(heapscope, a, b)
    assert (doc["format"], doc["version"], doc["metric"], doc["regression"]) == (
        "heapscope-diff", 1, "count", None)
    rows = {(r["region"], r["size"]): r for r in doc["sizes"]}
    assert set(rows) == set(SIZES)
    for key, (before, after) in SIZES.items():
        r = rows[key]
        size = key[1]
        assert (r["count_a"], r["count_b"], r["delta"]) == (before, after, after - before), key
        assert (r["bytes_a"], r["bytes_b"]) == (before * size, after * size), key
    assert rows[("build", 12)]["status"] == "gone" and rows[("build", 24)]["status"] == "new"
    assert rows[("solve", 64)]["status"] == "more" and rows[("solve", 64)]["ratio"] == 1.6
    assert rows[("build", 40)]["status"] == "same"
    t = doc["total"]
    assert (t["count_a"], t["count_b"], t["bytes_a"], t["bytes_b"]) == (470, 360, 11120, 13680)
    assert doc["percent"]["count"] == pytest.approx(-110 / 470 * 100)
    assert doc["percent"]["bytes"] == pytest.approx(2560 / 11120 * 100)
    assert doc["migrations"] == [
        {"region": "build", "fell": [{"size": 12, "delta": -300}], "rose": [{"size": 24, "delta": 150}]},
        {"region": "solve", "fell": [{"size": 16, "delta": -20}],
         "rose": [{"size": 32, "delta": 30}, {"size": 64, "delta": 30}]}]
    text = heapscope("diff", a, b).stdout
    assert "Allocations: 470 -> 360 (-110, -23.40%); bytes: 11,120 -> 13,680 (+2,560, +23.02%)" in text
    assert "Per size and region, biggest change first (5 changed, 1 unchanged):" in text
    assert "  build: fell 12 B (-300); rose 24 B (+150)" in text
    assert "  solve: fell 16 B (-20); rose 32 B (+30), 64 B (+30)" in text


def test_stacks_matched_by_symbolized_frames(heapscope, runs):
    a, b = runs
    doc = diff_json(heapscope, a, b, "--stacks")
    got = []
    for s in doc["stacks"]:
        inner = s["frames"][0]
        assert Path(inner["file"]).name == "diff_variant.c"
        got.append((s["region"], s["size"], s["count_a"], s["count_b"], s["status"], inner["function"],
                    inner["line"]))
        assert [f["function"] for f in s["frames"][:2]] == [inner["function"], "main"]
    assert got == [(r, size, ca, cb, st, fn, line_of(mark)) for r, size, ca, cb, st, fn, mark in STACKS]
    (moved,) = doc["path_migrations"]
    assert (moved["region"], moved["before"], moved["after"]) == ("build", [[12, 300]], [[24, 150]])
    assert [(f["function"], f["line"]) for f in moved["frames"][:2]] == [
        ("make_pairs", line_of("pairs")), ("main", line_of("main-pairs"))]
    text = heapscope("diff", a, b, "--stacks").stdout
    assert "Stack trace types matched by function/file/line (5 changed, 1 unchanged):" in text
    assert "  build 12 B: 300 -> 0 (gone)  make_pairs <- main <- " in text
    assert "  solve 64 B: 50 -> 80 (more)  make_temps <- main <- " in text
    assert "  path changed size in build: 12 B x300 -> 24 B x150: make_pairs <- main <- " in text
    rows = list(csv.DictReader(io.StringIO(heapscope("diff", a, b, "--stacks", "--format", "csv").stdout)))
    stack_rows = [(r["region"], int(r["size"]), int(r["count_a"]), int(r["count_b"]), r["status"])
                  for r in rows if r["kind"] == "stack"]
    assert stack_rows == [x[:5] for x in STACKS]
    assert [r["stack"].split(" <- ")[:2] for r in rows if r["kind"] == "stack"][0] == ["make_pairs", "main"]


def test_stacks_of_one_region_and_size(heapscope, runs):
    a, b = runs
    doc = diff_json(heapscope, a, b, "--stacks", "--region", "solve", "--size", "16,64")
    assert [(r["region"], r["size"], r["count_a"], r["count_b"]) for r in doc["sizes"]] == [
        ("solve", 64, 50, 80), ("solve", 16, 20, 0)]
    assert [(s["size"], s["status"]) for s in doc["stacks"]] == [(64, "more"), (16, "gone")]
    assert doc["total"]["count_a"] == 70 and doc["total"]["count_b"] == 80


def test_fail_if_more_exit_codes(heapscope, runs):
    a, b = runs
    # A -> B: allocations fell by 23.40%, bytes rose by 23.02%
    assert heapscope("diff", a, b, "--fail-if-more", "0", check=False).returncode == 0
    for limit, rc in (("20", 1), ("23", 1), ("23.1", 0), ("50", 0)):
        res = heapscope("diff", a, b, "--fail-if-more", limit, "--metric", "bytes", check=False)
        assert res.returncode == rc, (limit, res.stderr)
        if rc:
            assert res.stderr.strip() == (f"heapscope: diff: regression: bytes rose by 23.02% "
                                          f"(11,120 -> 13,680), more than the {limit}% allowed")
    # B -> A: allocations rose by 30.56% (360 -> 470)
    for limit, rc in (("30", 1), ("30.5", 1), ("30.6", 0)):
        res = heapscope("diff", b, a, "--fail-if-more", limit, check=False)
        assert res.returncode == rc, (limit, res.stderr)
    res = heapscope("diff", b, a, "--fail-if-more", "5", "--format", "json", check=False)
    assert res.returncode == 1
    assert json.loads(res.stdout)["regression"] == ("allocations rose by 30.56% (360 -> 470), more "
                                                    "than the 5% allowed")
    # a size that only B has: from 0 to N is always more
    res = heapscope("diff", a, b, "--size", "24", "--fail-if-more", "1000", check=False)
    assert res.returncode == 1 and "allocations rose from 0 to 150" in res.stderr


@pytest.mark.parametrize("limit", ["nan", "NaN", "inf", "-inf", "1e999", "-5", "-0.5"])
def test_fail_if_more_rejects_what_would_turn_the_check_off(heapscope, runs, limit):
    a, b = runs
    res = heapscope("diff", b, a, f"--fail-if-more={limit}", check=False)
    assert res.returncode == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("heapscope: error: --fail-if-more takes a finite "
                                                   "percentage >= 0"), res.stderr


def test_same_profile_says_no_change(heapscope, runs):
    a, _ = runs
    text = heapscope("diff", a, a, "--stacks").stdout
    assert "A: " in text and "(1 process)" in text and "process(es)" not in text
    assert "Allocations: 470 -> 470 (+0, +0.00%); bytes: 11,120 -> 11,120 (+0, +0.00%)" in text
    assert "No change: every size in every region has the same allocation count in A and B (4 rows)." in text
    assert "Stack trace types matched by function/file/line: no change (each of 4 types has the same " \
           "count in A and B)." in text
    assert "biggest change first" not in text and "Migrations" not in text
    doc = diff_json(heapscope, a, a, "--stacks")
    rows = sorted((r["region"], r["size"], r["count_a"], r["count_b"], r["status"]) for r in doc["sizes"])
    assert rows == [
        ("build", 12, 300, 300, "same"), ("build", 40, 100, 100, "same"),
        ("solve", 16, 20, 20, "same"), ("solve", 64, 50, 50, "same")]
    assert doc["migrations"] == [] and doc["path_migrations"] == [] and doc["regression"] is None
    assert [s["status"] for s in doc["stacks"]] == ["same"] * 4
    rows = list(csv.DictReader(io.StringIO(heapscope("diff", a, a, "--format", "csv").stdout)))
    assert rows[0]["kind"] == "total" and (rows[0]["count_a"], rows[0]["delta"]) == ("470", "0")
    assert sorted((r["region"], r["size"], r["delta"]) for r in rows[1:]) == [
        ("build", "12", "0"), ("build", "40", "0"), ("solve", "16", "0"), ("solve", "64", "0")]
    assert heapscope("diff", a, a, "--fail-if-more", "0", check=False).returncode == 0
    empty = heapscope("diff", a, a, "--size", "99999").stdout
    assert "No allocation of the selection in A or in B: nothing to compare." in empty


def test_stacks_match_across_differently_named_programs(heapscope, runs, renamed):
    """Frames are matched by source file name, not its directory, and frames without line
    information in the program itself (_start) as the program's, whatever its file is
    called: a renamed build from another checkout compares like a rebuilt one."""
    a, _ = runs
    doc = diff_json(heapscope, a, renamed, "--stacks")
    got = [(s["region"], s["size"], s["count_a"], s["count_b"], s["status"]) for s in doc["stacks"]]
    assert got == [x[:5] for x in STACKS]
    (moved,) = doc["path_migrations"]
    assert (moved["before"], moved["after"]) == ([[12, 300]], [[24, 150]])
