"""End to end: record tests/programs/stk_paths.cpp with stacks for size 40, then
`heapscope stacks`: the expected stack trace types, their exact counts, and the
function names and source lines of their frames (lines found by LINE-MARK comments)."""
import json
from pathlib import Path

import pytest

from helpers.known_programs import user_frames

SOURCE = Path(__file__).resolve().parents[1] / "programs" / "stk_paths.cpp"


def line_of(mark):
    hits = [i + 1 for i, t in enumerate(SOURCE.read_text().splitlines()) if f"LINE-MARK {mark}" in t]
    assert len(hits) == 1, mark
    return hits[0]


# Expected types in region local, most frequent first: (count, [(function, mark), ...]) for the
# frames up to main; frames below main (libc start-up) are not the program's.
LOCAL_TYPES = [
    (200, [("alloc_leaf", "leaf-malloc"), ("path_a", "a-call"), ("phase_local", "local-a1"),
           ("main", "main-local")]),
    (150, [("path_b", "b-malloc"), ("phase_local", "local-b"), ("main", "main-local")]),
    (100, [("alloc_leaf", "leaf-malloc"), ("path_a", "a-call"), ("phase_local", "local-a2"),
           ("main", "main-local")]),
    (75, [("fem::Mesh<double>::refine(int)", "c-new"), ("phase_local", "local-c"),
          ("main", "main-local")]),
    (50, [("inlined_alloc", "d-inlined"), ("path_d", "d-call"), ("phase_local", "local-d"),
          ("main", "main-local")]),
]
NONE_TYPES = [(7, [("path_b", "b-malloc"), ("main", "main-b")])]


def expected(types, runs=1):
    return [(count * runs, [(fn, line_of(mark)) for fn, mark in frames]) for count, frames in types]


@pytest.fixture(scope="module")
def exe(build):
    return build("stk_paths.cpp")


@pytest.fixture(scope="module", params=["dwarf", "fp"])
def recorded(request, exe, heapscope, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"stk-{request.param}")
    heapscope("record", "-o", out, "--sizes", "40", "--unwind", request.param, "--", exe)
    return out


def test_stack_types_counts_and_frames(recorded, heapscope, exe):
    doc = json.loads(heapscope("stacks", recorded, "--size", "40", "--top", "0", "--format", "json").stdout)
    assert doc["not_recorded"] == []
    assert not any(str(exe) in note for note in doc["notes"])   # the program has its debug info
    assert [(g["size"], g["region"], g["types"], g["count"], g["bytes"]) for g in doc["groups"]] == [
        (40, "(none)", 1, 7, 280), (40, "local", 5, 575, 575 * 40)]
    none, local = doc["groups"]
    assert [(t["count"], user_frames(t)) for t in local["stack_types"]] == expected(LOCAL_TYPES)
    assert [(t["count"], user_frames(t)) for t in none["stack_types"]] == expected(NONE_TYPES)
    inlined = local["stack_types"][4]["frames"]
    assert [f["inlined"] for f in inlined[:2]] == [True, False]
    assert all(f["file"] == str(SOURCE) and f["module"] == str(exe)
               for t in local["stack_types"] for f in t["frames"][:len(user_frames(t))])


def test_text_for_one_region(recorded, heapscope, exe):
    text = heapscope("stacks", recorded, "--size", "40", "--region", "local", "--top", "2").stdout
    lines = text.splitlines()
    assert "Stack trace types for size 40 in region local: 5 types, 575 allocations (23,000 bytes)" in lines
    assert "(none)" not in text
    i = lines.index("Stack trace type 2/5: 150 occurrences, 6,000 bytes")
    assert lines[i + 1] == f"  [0] path_b @ {SOURCE}:{line_of('b-malloc')} ({exe.name})"
    assert lines[i + 2] == f"  [1] phase_local @ {SOURCE}:{line_of('local-b')} ({exe.name})"
    assert "Stack trace type 3/5" not in text
    assert "(2 of 5 types shown; --top N shows more, --top 0 all)" in lines


def test_unrecorded_size(recorded, heapscope, exe):
    res = heapscope("stacks", recorded, "--size", "41", check=False)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip() == (
        f"heapscope: error: no stacks recorded for size 41 (stacks were recorded for sizes 40); "
        f"record them with: heapscope record --sizes 41 -- {exe}")
    # The report still counts the 41-byte blocks exactly.
    doc = json.loads(heapscope("report", recorded, "--size", "40,41", "--format", "json").stdout)
    assert {r["size"]: (r["counts"]["(none)"], r["counts"]["local"]) for r in doc["sizes"]} == {
        40: (7, 575), 41: (0, 9)}


def test_two_processes_merge(exe, heapscope, tmp_path):
    # Two runs, two files, two load addresses: the types merge by symbolized frames.
    for _ in range(2):   # --append: a directory that holds a run is refused without it
        heapscope("record", "-o", tmp_path, "--append", "--sizes", "40", "--regions", "local",
                  "--", exe)
    assert len(list(tmp_path.glob("*.hsp"))) == 2
    doc = json.loads(heapscope("stacks", tmp_path, "--size", "40", "--top", "0", "--format", "json").stdout)
    [local] = doc["groups"]   # --regions local: nothing recorded outside it
    assert local["region"] == "local" and local["types"] == 5
    assert [(t["count"], user_frames(t)) for t in local["stack_types"]] == expected(LOCAL_TYPES, runs=2)
