"""End to end: record tests/programs/rep_holders.c (linked with librep_vendor.so from
rep_vendor.c) with --track, then `heapscope peak`, `heapscope leaks` with and without
LeakSanitizer-style suppressions (by function, by module, by source file of an outer
frame), --fail-on-leaks, and the Massif export read by Valgrind's ms_print."""
import json
import re
import subprocess
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
PEAK = 10 * 4096 + 4 * 1000


def line_of(source, mark):
    hits = [i + 1 for i, t in enumerate((PROGRAMS / source).read_text().splitlines())
            if f"LINE-MARK {mark}" in t]
    assert len(hits) == 1, mark
    return hits[0]


@pytest.fixture(scope="module")
def program(build, tmp_path_factory):
    libdir = tmp_path_factory.mktemp("rep-vendor")
    lib = libdir / "librep_vendor.so"
    res = subprocess.run(["gcc", "-g", "-O0", "-fno-omit-frame-pointer", "-shared", "-fPIC", "-o", str(lib),
                          str(PROGRAMS / "rep_vendor.c")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    exe = build("rep_holders.c", f"-L{libdir}", "-lrep_vendor", f"-Wl,-rpath,{libdir}", name="rep_holders")
    return exe, lib


@pytest.fixture(scope="module")
def recorded(program, heapscope, tmp_path_factory):
    out = tmp_path_factory.mktemp("rep-holders")
    heapscope("record", "--track", "--sizes", "all", "-o", out, "--", program[0])
    return out


def first_frame(t):
    f = t["frames"][0]
    return f["function"], f["line"]


def test_peak_and_who_held_it(heapscope, recorded):
    doc = json.loads(heapscope("peak", recorded, "--format", "json").stdout)
    (pk,) = doc["peaks"]
    assert (pk["peak_bytes"], pk["unattributed_bytes"]) == (PEAK, 0)
    assert pk["peak_mono_ns"] > 0
    assert pk["end_bytes"] == 3 * 72 + 5 * 200
    assert [(s["size"], s["blocks"], s["bytes"], s["share"]) for s in pk["sizes"]] == \
        [(4096, 10, 40960, 40960 / PEAK), (1000, 4, 4000, 4000 / PEAK)]
    assert [(first_frame(t), t["bytes"]) for t in pk["stack_types"]] == \
        [(("build_mesh", line_of("rep_holders.c", "mesh")), 40960),
         (("scratch", line_of("rep_holders.c", "scratch")), 4000)]
    text = heapscope("peak", recorded).stdout
    assert "44,960 bytes requested" in text
    assert "1. 40,960 bytes (91.1% of the peak): 10 blocks of size 4,096 in (none)" in text
    one = json.loads(heapscope("peak", recorded, "--size", "1000", "--format", "json").stdout)["peaks"][0]
    assert (one["peak_bytes"], one["selected_bytes"], [s["size"] for s in one["sizes"]]) == (PEAK, 4000, [1000])


def leaks(heapscope, recorded, *args, check=True):
    res = heapscope("leaks", recorded, "--format", "json", *args, check=check)
    return res, json.loads(res.stdout)


VENDOR = ("vendor_cache_init", line_of("rep_vendor.c", "vendor"))
CONFIG = ("parse_config", line_of("rep_holders.c", "config"))


def test_leaks_without_suppressions(heapscope, recorded, program):
    res, doc = leaks(heapscope, recorded, "--fail-on-leaks", check=False)
    assert res.returncode == 1 and "1,216 bytes leaked in 8 blocks" in res.stderr
    assert [(first_frame(t), t["size"], t["blocks"], t["bytes"]) for t in doc["leaks"]] == \
        [(VENDOR, 200, 5, 1000), (CONFIG, 72, 3, 216)]
    assert doc["leaks"][0]["frames"][0]["module"] == str(program[1])
    assert doc["totals"]["reported_bytes"] == 1216 and doc["totals"]["suppressed_types"] == 0
    rows = heapscope("leaks", recorded, "--format", "csv").stdout.splitlines()
    assert rows[0] == "status,rank,size,region,blocks,bytes,suppressed_by,frames" and len(rows) == 3
    assert rows[1].startswith("reported,1,200,(none),5,1000,,vendor_cache_init <- main")
    assert rows[2].startswith("reported,2,72,(none),3,216,,parse_config <- main")
    text = heapscope("leaks", recorded).stdout
    assert "SUMMARY: 1,216 bytes leaked in 8 blocks (2 stack trace types); 0 bytes in 0 blocks suppressed" in text


@pytest.mark.parametrize("rule, suppressed", [
    ("leak:vendor_cache_*", [VENDOR]),            # function name, wildcard
    ("leak:librep_vendor.so", [VENDOR]),          # module path (substring)
    ("leak:^parse_config$", [CONFIG]),            # anchored function name
    ("leak:rep_holders.c", [VENDOR, CONFIG]),     # source file of an outer frame (main)
    ("leak:no_such_function", []),
])
def test_leaks_with_a_suppression(heapscope, recorded, tmp_path, rule, suppressed):
    supp = tmp_path / "lsan.supp"
    supp.write_text(f"# known leaks\n\n{rule}\n")
    res, doc = leaks(heapscope, recorded, "--suppressions", supp, "--fail-on-leaks", check=False)
    assert [first_frame(t) for t in doc["suppressed"]] == suppressed
    reported = [f for f in (VENDOR, CONFIG) if f not in suppressed]
    assert [first_frame(t) for t in doc["leaks"]] == reported
    (r,) = doc["suppressions"]["rules"]
    assert (r["pattern"], r["line"], r["types"]) == (rule[len("leak:"):], 3, len(suppressed))
    assert res.returncode == (1 if reported else 0)


def test_bad_suppression_file(heapscope, recorded, tmp_path):
    supp = tmp_path / "bad.supp"
    supp.write_text("race:foo\n")
    res = heapscope("leaks", recorded, "--suppressions", supp, check=False)
    assert res.returncode == 2 and "bad.supp:1: expected `leak:PATTERN`" in res.stderr


def test_massif_export_read_by_ms_print(heapscope, recorded, tmp_path):
    out = tmp_path / "massif.out"
    heapscope("export", recorded, "--format", "massif", "-o", out)
    text = out.read_text()
    assert text.splitlines()[2] == "time_unit: ms"
    peak = text[text.index("heap_tree=peak"):]
    assert re.search(r"mem_heap_B=(\d+)\nmem_heap_extra_B=\d+\nmem_stacks_B=0\nheap_tree=peak", text).group(1) \
        == str(PEAK)
    mesh_line = line_of("rep_holders.c", "mesh")
    assert re.search(rf"^ n1: 40960 0x[0-9A-F]+: build_mesh \(rep_holders.c:{mesh_line}\)$", peak, re.M)
    res = subprocess.run(["ms_print", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert re.search(rf"\(40,960B\) 0x[0-9A-F]+: build_mesh \(rep_holders.c:{mesh_line}\)", res.stdout)
    assert re.search(r"^\s+\d+\s+\d+\s+[\d,]+\s+44,960\s+[\d,]+\s+0$", res.stdout, re.M)


def test_same_reports_replayed_from_an_event_trace(program, heapscope, tmp_path):
    heapscope("record", "--trace", "--sizes", "all", "-o", tmp_path, "--", program[0])
    doc = json.loads(heapscope("peak", tmp_path, "--format", "json").stdout)
    assert doc["tracking"]["source"] == "trace"
    (pk,) = doc["peaks"]
    assert (pk["peak_bytes"], pk["end_bytes"]) == (PEAK, 3 * 72 + 5 * 200)
    assert [(first_frame(t), t["blocks"], t["bytes"]) for t in pk["stack_types"]] == \
        [(("build_mesh", line_of("rep_holders.c", "mesh")), 10, 40960),
         (("scratch", line_of("rep_holders.c", "scratch")), 4, 4000)]
    _, doc = leaks(heapscope, tmp_path)
    assert [(first_frame(t), t["blocks"], t["bytes"]) for t in doc["leaks"]] == [(VENDOR, 5, 1000), (CONFIG, 3, 216)]
    assert "replayed from the event trace" in heapscope("leaks", tmp_path).stdout
