"""`heapscope report` figures on synthetic profiles with known counts: the size x region
table, size groups, hot sizes and shares, API calls, filters, merging, text and CSV."""
import csv
import io
import re

import pytest

from heapscope.analysis.selection import SizeSet
from heapscope.errors import HeapscopeError
from heapscope.profile import read_profile
from heapscope.analysis import identify
from heapscope.render.csv_tables import report_csv
from heapscope.render.report_text import render
from helpers.profile_builder import API, ProfileBuilder

KIB, MIB = 1024, 1024 * 1024
# region ids: 1 split, 2 split/local (nested), 3 post
REGIONS = [(1, 0, "split"), (2, 1, "local"), (3, 0, "post")]
SIZES_A = [(0, 100, 3), (1, 12, 5000), (2, 12, 3584), (2, 24, 700),
           (2, 256 * KIB, 2), (2, 256 * KIB + 1, 3), (2, MIB, 4), (2, MIB + 1, 1), (3, 24, 10)]
APIS_A = [(2, API["malloc"], 3000), (2, API["calloc"], 1294), (2, API["realloc"], 12),
          (2, API["free"], 2900), (0, API["operator_new"], 3), (1, API["malloc"], 5000),
          (1, API["failed"], 2)]


def make(tmp_path, name, sizes, apis=(), regions=REGIONS, pid=100, **kw):
    b = ProfileBuilder(pid=pid, **kw)
    b.snapshot(regions=regions, sizes=sizes, apis=apis)
    return read_profile(b.write(tmp_path / name))


@pytest.fixture
def a(tmp_path):
    return make(tmp_path, "a.hsp", SIZES_A, APIS_A, cmdline=("fem", "--elements", "2000"))


def rows_of(doc):
    return {r["size"]: r["counts"] for r in doc["sizes"]}


def test_size_region_table(a):
    doc = identify.build([a])
    assert doc["regions"] == ["(none)", "split", "split/local", "post"]
    assert doc["distinct_sizes"] == 7
    assert [r["size"] for r in doc["sizes"]] == [12, 24, 100, 256 * KIB, 256 * KIB + 1, MIB, MIB + 1]
    assert rows_of(doc)[12] == {"(none)": 0, "split": 5000, "split/local": 3584, "post": 0}
    assert rows_of(doc)[24] == {"(none)": 0, "split": 0, "split/local": 700, "post": 10}
    row12 = doc["sizes"][0]
    assert row12["total_count"] == 8584 and row12["total_bytes"] == 8584 * 12
    assert row12["bytes"]["split/local"] == 3584 * 12
    assert doc["totals"]["split/local"] == dict(
        count=3584 + 700 + 2 + 3 + 4 + 1,
        bytes=3584 * 12 + 700 * 24 + 2 * 256 * KIB + 3 * (256 * KIB + 1) + 4 * MIB + MIB + 1)


def test_size_groups_boundaries(a):
    g = identify.build([a])["groups"]["split/local"]
    assert g["small"] == dict(count=3584 + 700 + 2, bytes=3584 * 12 + 700 * 24 + 2 * 256 * KIB)
    assert g["mid"] == dict(count=3 + 4, bytes=3 * (256 * KIB + 1) + 4 * MIB)
    assert g["large"] == dict(count=1, bytes=MIB + 1)
    assert identify.build([a])["groups"]["split"] == dict(
        small=dict(count=5000, bytes=60000), mid=dict(count=0, bytes=0), large=dict(count=0, bytes=0))


def test_hot_sizes_and_shares(a):
    doc = identify.build([a], hot=3)
    hot = doc["hot_sizes"]["split/local"]
    total = 3584 + 700 + 2 + 3 + 4 + 1
    assert [(h["size"], h["count"]) for h in hot] == [(12, 3584), (24, 700), (MIB, 4)]
    assert hot[0]["share"] == pytest.approx(3584 / total)
    assert hot[1]["share"] == pytest.approx(700 / total)
    assert doc["hot_sizes"]["post"] == [dict(size=24, count=10, bytes=240, share=1.0)]


def test_api_calls(a):
    api = identify.build([a])["api"]
    assert api["split/local"] == dict(malloc=3000, calloc=1294, realloc=12, free=2900)
    assert api["(none)"] == dict(operator_new=3)
    assert api["split"] == dict(malloc=5000, failed=2)
    assert api["post"] == {}


def test_filters(a):
    doc = identify.build([a], sizes=SizeSet("12,100-300000"))
    assert [r["size"] for r in doc["sizes"]] == [12, 100, 256 * KIB, 256 * KIB + 1]
    # --min-count: at least N in one region (12: 5000 in split; 24: 700 in split/local)
    doc = identify.build([a], min_count=700)
    assert [r["size"] for r in doc["sizes"]] == [12, 24]
    doc = identify.build([a], min_count=701)
    assert [r["size"] for r in doc["sizes"]] == [12]
    # --top: most allocations first (totals over regions: 12 -> 8584, 24 -> 710, 1 MiB -> 4)
    doc = identify.build([a], top=3)
    assert [r["size"] for r in doc["sizes"]] == [12, 24, MIB]
    # --region by name finds the nested region; groups and API follow, size filters do not.
    doc = identify.build([a], region="local", sizes=SizeSet("24"))
    assert doc["regions"] == ["split/local"]
    assert rows_of(doc) == {24: {"split/local": 700}}
    assert doc["totals"]["split/local"]["count"] == 4294
    assert list(doc["api"]) == ["split/local"]
    assert identify.build([a], region="split/local")["regions"] == ["split/local"]
    assert identify.build([a], region="split")["regions"] == ["split"]
    with pytest.raises(HeapscopeError, match="no region 'solve'"):
        identify.build([a], region="solve")


def test_merge_and_per_process(tmp_path, a):
    # Process b: regions in another order and id numbering, a region a does not have.
    b = make(tmp_path, "b.hsp", [(1, 12, 16), (2, 12, 1), (3, 48, 5), (0, 100, 1)],
             [(2, API["free"], 7)], regions=[(1, 0, "post"), (2, 0, "split"), (3, 2, "local")],
             pid=200)
    b_only = make(tmp_path, "c.hsp", [(1, 8, 1)], regions=[(1, 0, "reduce")], pid=300)
    doc = identify.build([a, b, b_only])
    assert doc["merged"] and len(doc["processes"]) == 3
    assert doc["regions"] == ["(none)", "split", "split/local", "post", "reduce"]
    counts = rows_of(doc)
    assert counts[12] == {"(none)": 0, "split": 5001, "split/local": 3584, "post": 16, "reduce": 0}
    assert counts[48] == {"(none)": 0, "split": 0, "split/local": 5, "post": 0, "reduce": 0}
    assert counts[100]["(none)"] == 4 and counts[8]["reduce"] == 1
    assert doc["api"]["split"] == dict(malloc=5000, free=7, failed=2)

    doc = identify.build([a, b], per_process=True)
    assert [s["process"] for s in doc["per_process"]] == [0, 1]
    assert doc["per_process"][1]["regions"] == ["(none)", "post", "split", "split/local"]
    assert rows_of(doc["per_process"][1])[12] == {"(none)": 0, "post": 16, "split": 1, "split/local": 0}
    assert rows_of(doc)[12]["split"] == 5001


def test_text(a):
    text = render(identify.build([a], top=2, hot=2))
    lines = text.splitlines()
    assert lines[0] == "heapscope report: 1 process"
    assert any(re.fullmatch(r"\s*command\s+fem --elements 2000", l) for l in lines)
    assert "Allocations per size and region (2 of 7 sizes, most allocations first)" in text
    header = next(l for l in lines if l.split()[:1] == ["size"])
    assert header.split() == ["size", "(none)", "split", "split/local", "post", "total", "bytes"]
    assert any(l.split() == ["12", "0", "5,000", "3,584", "0", "8,584", "103,008"] for l in lines)
    assert any(l.split() == ["24", "0", "0", "700", "10", "710", "17,040"] for l in lines)
    assert any(l.split()[:2] == ["split/local", "4,286"] for l in lines)  # small count
    local_bytes = 3584 * 12 + 700 * 24 + 2 * 256 * KIB + 3 * (256 * KIB + 1) + 4 * MIB + MIB + 1
    hot = lines.index(f"  split/local: 4,294 allocations, {local_bytes:,} bytes")
    assert lines[hot + 2].split() == ["1", "12", "3,584", "83.5%", "43,008"]
    assert lines[hot + 3].split() == ["2", "24", "700", "16.3%", "16,800"]
    assert any(l.split() == ["realloc", "0", "0", "12", "0"] for l in lines)
    assert any(l.split() == ["free", "0", "0", "2,900", "0"] for l in lines)


def test_warnings_capped_in_text(tmp_path):
    profiles = []
    for pid in range(12):
        b = ProfileBuilder(pid=pid)
        b.snapshot(sizes=[(0, 8, 1)], lost=pid + 1)
        profiles.append(read_profile(b.write(tmp_path / f"{pid}.hsp")))
    lines = render(identify.build(profiles)).splitlines()
    warnings = [l for l in lines if l.startswith("  warning")]
    assert len(warnings) == 11
    assert warnings[0] == "  warning   pid 0 on node01: 1 allocation of the selected sizes lost its stack (the stack table was full)"
    assert warnings[-1] == "  warning   ... and 2 more (all are in --format json)"
    assert [len(p["warnings"]) for p in identify.build(profiles)["processes"]] == [1] * 12


def test_csv(a):
    rows = list(csv.DictReader(io.StringIO(report_csv(identify.build([a], hot=1)))))
    size = {(r["region"], int(r["item"])): (int(r["count"]), int(r["bytes"]))
            for r in rows if r["section"] == "size"}
    assert size[("split", 12)] == (5000, 60000)
    assert size[("post", 24)] == (10, 240)
    assert ("post", 12) not in size   # zero cells are not rows
    groups = {(r["region"], r["item"]): int(r["count"]) for r in rows if r["section"] == "group"}
    assert groups[("split/local", "mid")] == 7
    hot = [r for r in rows if r["section"] == "hot" and r["region"] == "split/local"]
    assert len(hot) == 1 and float(hot[0]["share"]) == pytest.approx(3584 / 4294, abs=1e-6)
    api = {(r["region"], r["item"]): int(r["count"]) for r in rows if r["section"] == "api"}
    assert api[("split/local", "calloc")] == 1294
    assert {r["process"] for r in rows} == {"all"}
