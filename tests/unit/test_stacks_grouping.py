"""`heapscope stacks` on synthetic profiles whose frames are real return addresses of
tests/programs/stk_symbols.cpp: grouping, merging across processes (different load
addresses), ordering, --top/--depth, text/CSV/JSON, and sizes recorded without stacks."""
import csv
import io
from pathlib import Path

import pytest

from heapscope.analysis import stack_types
from heapscope.analysis.selection import SizeSet
from heapscope.errors import HeapscopeError
from heapscope.profile import read_profile
from heapscope.render.json_text import to_json
from heapscope.render.csv_tables import stacks_csv
from heapscope.render.stacks_text import render
from heapscope.symbolize import SymbolCache, Symbolizer
from heapscope.symbolize.elf import read_elf
from helpers.profile_builder import ProfileBuilder
from helpers.program_addresses import program_addresses

SOURCE = Path(__file__).resolve().parents[1] / "programs" / "stk_symbols.cpp"


def line_of(mark):
    hits = [i + 1 for i, t in enumerate(SOURCE.read_text().splitlines()) if f"LINE-MARK {mark}" in t]
    assert len(hits) == 1
    return hits[0]


@pytest.fixture(scope="module")
def runs(build):
    exe = build("stk_symbols.cpp")
    return exe, program_addresses(exe), program_addresses(exe)


def profile(tmp_path, exe, run, name, stacks, pid, stack_sizes="12,24"):
    """stacks: (size, count, [marks]); all in region local (id 1)."""
    b = ProfileBuilder(pid=pid, exe=str(exe), cmdline=(str(exe), "--n", "1"),
                       stack_sizes=stack_sizes, stack_regions="local")
    rows = [(1, size, count, count * size, tuple(run["addr"][m] for m in marks))
            for size, count, marks in stacks]
    b.snapshot(regions=[(1, 0, "local")], sizes=[(1, s, c) for s, c, _ in stacks], stacks=rows,
               modules=[(str(exe), run["bias"], bytes.fromhex(read_elf(str(exe)).build_id), run["ranges"])])
    return read_profile(b.write(tmp_path / name))


TYPE_A = ["c-call", "template-call"]
TYPE_B = ["inlined-call", "c-call"]


@pytest.fixture
def two(tmp_path, runs):
    exe, run1, run2 = runs
    p1 = profile(tmp_path, exe, run1, "p1.hsp", [(12, 256, TYPE_A), (12, 100, TYPE_B), (24, 5, TYPE_A)], 1)
    p2 = profile(tmp_path, exe, run2, "p2.hsp", [(12, 44, TYPE_A)], 2)
    return p1, p2


def build(profiles, spec, tmp_path, **kw):
    return stack_types.build(profiles, SizeSet(spec), symbolizer=Symbolizer(SymbolCache(tmp_path / "c")), **kw)


def test_types_merged_across_processes(tmp_path, two):
    doc = build(list(two), "12", tmp_path, region="local")
    assert doc["notes"] == [] and doc["not_recorded"] == []
    [g] = doc["groups"]
    assert (g["size"], g["region"], g["types"], g["count"], g["bytes"]) == (12, "local", 2, 400, 4800)
    first, second = g["stack_types"]
    assert (first["rank"], first["count"], first["bytes"]) == (1, 300, 3600)
    assert [(f["function"], f["line"], f["inlined"]) for f in first["frames"]] == [
        ("plain_c_function", line_of("c-call"), False),
        ("solver::Matrix<double>::multiply()", line_of("template-call"), False)]
    assert (second["count"], second["bytes"]) == (100, 1200)
    assert [(f["function"], f["line"], f["inlined"]) for f in second["frames"]] == [
        ("inlined_helper", line_of("inlined-call"), True),
        ("outer_function(int)", line_of("outer-call"), False),
        ("plain_c_function", line_of("c-call"), False)]
    assert all(f["file"] == str(SOURCE) for t in g["stack_types"] for f in t["frames"])


def test_per_process(tmp_path, two):
    doc = build(list(two), "12", tmp_path, per_process=True)
    assert not doc["merged"]
    assert [[(g["types"], g["count"]) for g in sec["groups"]] for sec in doc["per_process"]] == [
        [(2, 356)], [(1, 44)]]
    assert [t["count"] for t in doc["groups"][0]["stack_types"]] == [300, 100]
    text = render(doc)
    assert text.count("=== pid ") == 2 and "=== all 2 processes merged" in text
    rows = list(csv.DictReader(io.StringIO(stacks_csv(doc))))
    assert {(r["process"], r["type_count"]) for r in rows if r["frame"] == "0"} == {
        ("1", "256"), ("1", "100"), ("2", "44"), ("all", "300"), ("all", "100")}


def test_groups_per_size_in_order(tmp_path, two):
    doc = build(list(two), "24,12", tmp_path)
    assert [(g["size"], g["types"], g["count"]) for g in doc["groups"]] == [(12, 2, 400), (24, 1, 5)]


def test_text(tmp_path, two, runs):
    exe = runs[0]
    text = render(build(list(two), "12", tmp_path, region="local", top=1))
    lines = text.splitlines()
    assert "Stack trace types for size 12 in region local: 2 types, 400 allocations (4,800 bytes)" in lines
    i = lines.index("Stack trace type 1/2: 300 occurrences, 3,600 bytes")
    assert lines[i + 1] == f"  [0] plain_c_function @ {SOURCE}:{line_of('c-call')} ({exe.name})"
    assert lines[i + 2] == (f"  [1] solver::Matrix<...>::multiply() @ {SOURCE}:"
                            f"{line_of('template-call')} ({exe.name})")
    full = render(build(list(two), "12", tmp_path, region="local", top=1), full_names=True)
    assert (f"  [1] solver::Matrix<double>::multiply() @ {SOURCE}:"
            f"{line_of('template-call')} ({exe.name})") in full.splitlines()
    assert "Stack trace type 2/2" not in text
    assert "(1 of 2 types shown; --top N shows more, --top 0 all)" in lines

    text = render(build(list(two), "12", tmp_path, top=0, depth=1))
    lines = text.splitlines()
    i = lines.index("Stack trace type 2/2: 100 occurrences, 1,200 bytes")
    assert lines[i + 1] == (f"  [0] inlined_helper @ {SOURCE}:{line_of('inlined-call')} "
                            f"({exe.name}) [inlined]")
    assert lines[i + 2] == "  ... 2 more frames (--depth 1 set)"


def test_csv_and_json(tmp_path, two):
    doc = build(list(two), "12", tmp_path)
    rows = list(csv.DictReader(io.StringIO(stacks_csv(doc))))
    assert len(rows) == 2 + 3
    assert [(r["type"], r["frame"], r["function"], r["inlined"]) for r in rows if r["type"] == "2"] == [
        ("2", "0", "inlined_helper", "1"), ("2", "1", "outer_function(int)", "0"),
        ("2", "2", "plain_c_function", "0")]
    assert rows[0]["type_count"] == "300" and rows[0]["line"] == str(line_of("c-call"))
    import json
    back = json.loads(to_json(doc))
    assert back["format"] == "heapscope-stacks" and back["version"] == 1
    assert [p["pid"] for p in back["processes"]] == [1, 2]
    assert back["groups"][0]["stack_types"][1]["frames"][0]["inlined"] is True


def test_sizes_without_stacks(tmp_path, runs):
    exe, run1, _ = runs
    p = profile(tmp_path, exe, run1, "only24.hsp", [(24, 5, TYPE_A)], 1, stack_sizes="24")
    with pytest.raises(HeapscopeError) as info:
        build([p], "12", tmp_path, region="local")
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("no stacks recorded for size 12 in region local (stacks were recorded "
                          "for sizes 24 in regions local); record them with: "
                          "heapscope record --sizes 12 --regions local -- ")
    assert msg.endswith(f"{exe} --n 1")
    # Partly recorded: the recorded size is shown, the other one listed with its command.
    doc = build([p], "24,48", tmp_path)
    assert [g["size"] for g in doc["groups"]] == [24]
    assert [m["size"] for m in doc["not_recorded"]] == ["48"]
    assert ("no stacks recorded for size 48 (stacks were recorded for sizes 24 in regions local);\n"
            "  record them with: heapscope record --sizes 48 -- ") in render(doc)
    # A region the recording did not cover.
    q = profile(tmp_path, exe, run1, "q.hsp", [(24, 5, TYPE_A)], 1, stack_sizes="all")
    assert build([q], "24", tmp_path)["groups"][0]["count"] == 5
    nostacks = ProfileBuilder(pid=5, stack_sizes="")
    nostacks.snapshot(sizes=[(0, 12, 1)])
    with pytest.raises(HeapscopeError, match=r"size 12 \(the profile recorded no stacks\)"):
        build([read_profile(nostacks.write(tmp_path / "n.hsp"))], "12", tmp_path)


def test_recorded_but_never_allocated(tmp_path, runs):
    exe, run1, _ = runs
    p = profile(tmp_path, exe, run1, "r.hsp", [(12, 3, TYPE_A)], 1, stack_sizes="10-20")
    doc = build([p], "16", tmp_path, region="local")
    assert doc["groups"] == [] and doc["not_recorded"] == []
    assert ("No allocation of size 16 in region local was recorded with its stack: "
            "the program made none there.") in render(doc).splitlines()
    # A range that overlaps the recorded one counts as recorded.
    doc = build([p], "5-12", tmp_path)
    assert [(g["size"], g["count"]) for g in doc["groups"]] == [(12, 3)] and doc["not_recorded"] == []
