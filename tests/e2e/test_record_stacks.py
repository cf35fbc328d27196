"""Stack trace types captured by the recorder: only the selected sizes and regions,
aggregated per distinct path with exact counts, recorder frames removed, depth
honoured; with DWARF (libunwind) and frame-pointer unwinding."""
import json
from pathlib import Path

import pytest

from heapscope.profile import read_profile

from conftest import PROGRAMS

SOURCE = PROGRAMS / "rec_stacks.c"


def line_of(marker):
    for number, text in enumerate(SOURCE.read_text().splitlines(), 1):
        if marker in text:
            return number
    raise AssertionError(marker)


def record(heapscope, build, out, *options, allocator="glibc"):
    program = build("rec_stacks.c", "-DHEAPSCOPE_WEAK")
    heapscope("record", "-o", out, "--allocator", allocator, *options, "--", program)
    [path] = out.glob("heapscope.*.hsp")
    return path, read_profile(path)


def stacks_json(heapscope, path, *args):
    res = heapscope("stacks", path, "--format", "json", "--top", "0", *args)
    return json.loads(res.stdout)


@pytest.mark.parametrize("unwind,allocator", [("dwarf", "glibc"), ("fp", "glibc"),
                                              ("dwarf", "jemalloc")])
def test_types_of_the_selected_size_and_region(heapscope, build, tmp_path, unwind, allocator):
    path, p = record(heapscope, build, tmp_path, "--sizes", "1234", "--regions", "local",
                     "--unwind", unwind, allocator=allocator)
    assert p.settings["stack_sizes"] == "1234" and p.settings["stack_regions"] == "local"
    assert p.settings["unwinder"] == {"dwarf": "dwarf", "fp": "frame-pointers"}[unwind]
    types = sorted((t.region, t.size, t.count, t.bytes) for t in p.stack_types)
    # 1234 in "local": two paths; nothing from "other" (not selected), nothing of 1235
    assert types == [("local", 1234, 10, 12340), ("local", 1234, 20, 24680)]
    assert p.lost_stacks == 0
    # counting is not affected by the selection
    assert p.size_counts[("other", 1234)] == 7 and p.size_counts[("local", 1235)] == 3

    doc = stacks_json(heapscope, path, "--size", "1234", "--region", "local")
    [group] = doc["groups"]
    assert (group["size"], group["region"], group["types"], group["count"]) == (1234, "local", 2, 30)
    by_count = {t["count"]: t["frames"] for t in group["stack_types"]}
    for count, caller, line in ((20, "path_b", line_of("LINE_B")),
                                (10, "path_a", line_of("LINE_A"))):
        frames = by_count[count]
        # frame 0: the malloc call site; no recorder frame before it
        assert frames[0]["function"] == "alloc_here"
        assert frames[0]["line"] == line_of("LINE_MALLOC")
        assert frames[1]["function"] == caller and frames[1]["line"] == line
        assert frames[2]["function"] == "main"
        assert not any("heapscope" in (f["module"] or "") for f in frames)


def test_all_sizes_and_depth_limit(heapscope, build, tmp_path):
    path, p = record(heapscope, build, tmp_path, "--sizes", "all", "--depth", "2")
    mine = {(t.region, t.size, t.count) for t in p.stack_types
            if t.size in (1234, 1235)}
    assert mine == {("local", 1234, 10), ("local", 1234, 20), ("local", 1235, 3),
                    ("other", 1234, 7)}
    assert all(len(t.frames) <= 2 for t in p.stack_types)
    assert p.settings["max_depth"] == 2
    # every counted allocation of these sizes has its stack: counts agree
    for (region, size), n in p.size_counts.items():
        if size in (1234, 1235):
            assert sum(t.count for t in p.stack_types
                       if t.size == size and t.region == region) == n


def test_ranges_and_top_level_region(heapscope, build, tmp_path):
    path, p = record(heapscope, build, tmp_path, "--sizes", "1200-1234", "--regions", "other")
    assert sorted((t.region, t.size, t.count) for t in p.stack_types) == \
        [("other", 1234, 7)]
