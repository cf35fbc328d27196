"""`--html FILE` on report, stacks, callgraph, diff and timeline writes the same page as
`heapscope html` (the result still goes to stdout), and `heapscope demo` ends by writing
its HTML report: checked on the page's embedded documents against the JSON reports of a
program with known allocations (tests/programs/diff_variant.c)."""
import json
import re

import pytest

from conftest import compile_program
from helpers.diff_variant import SIZES


def page_data(path):
    html = path.read_text()
    m = re.search(r'<script type="application/json" id="hs-data">(.*?)</script>', html, re.S)
    assert m, f"{path} carries no embedded documents"
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def recordings(native, heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("shortcut")
    out = {}
    for side, flags in (("before", ()), ("after", ("-DFIXED",))):
        exe = compile_program(native, "diff_variant.c", root / f"{side}_prog", *flags)
        heapscope("record", "-o", root / side, "--sizes", "all", "--", exe)
        out[side] = root / side
    return out


def counts(data):
    """(region, size) -> count from the page's sizes x regions document."""
    return {(region, row["size"]): n for row in data["sizes"]["sizes"]
            for region, n in row["counts"].items() if n}


@pytest.mark.parametrize("command", [["report"], ["stacks", "--size", "12"],
                                     ["callgraph", "--size", "12"], ["timeline"]])
def test_html_option_writes_the_page_of_the_same_recording(recordings, heapscope, tmp_path, command):
    page = tmp_path / "page.html"
    res = heapscope(command[0], recordings["before"], *command[1:], "--html", page)
    assert res.stdout.strip(), "the command's own result still goes to stdout"
    assert f"wrote {page}" in res.stderr
    data = page_data(page)
    expected = {key: before for key, (before, _) in SIZES.items() if before}
    assert counts(data) == expected
    report = json.loads(heapscope("report", recordings["before"], "--format", "json",
                                  "--top", "0").stdout)
    assert data["sizes"]["totals"] == report["totals"]


def test_diff_html_option_compares_the_two_recordings(recordings, heapscope, tmp_path):
    page = tmp_path / "diff.html"
    heapscope("diff", recordings["before"], recordings["after"], "--html", page, check=False)
    data = page_data(page)
    assert counts(data) == {key: before for key, (before, _) in SIZES.items() if before}
    diff = json.loads(heapscope("diff", recordings["before"], recordings["after"], "--format",
                                "json", check=False).stdout)
    assert data["diff"]["sizes"] == diff["sizes"]
    shared = set(diff["total"]) & set(data["diff"]["total"])
    assert {k: data["diff"]["total"][k] for k in shared} == diff["total"]


def test_demo_ends_with_its_html_report(heapscope, tmp_path):
    res = heapscope("demo", "-o", tmp_path / "demo", "--cells", "16", timeout=600)
    page = tmp_path / "demo" / "heapscope-report.html"
    assert f"Open {page.resolve()} in a browser" in res.stdout
    data = page_data(page)
    report = json.loads(heapscope("report", tmp_path / "demo" / "locate", "--format", "json",
                                  "--top", "0").stdout)
    assert data["sizes"]["sizes"] == report["sizes"]
    assert data["stacks"]["groups"], "the demo's size has its flame graph"


def test_demo_refuses_a_mesh_its_workload_cannot_split(heapscope, tmp_path):
    res = heapscope("demo", "-o", tmp_path / "demo", "--cells", "8", check=False)
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert "--cells must be between 16 and 4096" in res.stderr


def test_bench_keeps_its_own_html_option(heapscope, tmp_path):
    """bench's --html FILE (its results page) is not the recordings' --html shortcut: a
    bench run with it must not look for recordings to draw (it failed with an internal
    error once)."""
    page = tmp_path / "bench.html"
    res = heapscope("bench", "-n", "1", "--warmup", "0", "--allocators", "glibc", "--no-progress",
                    "--html", page, "--", "true", check=False)
    assert res.returncode == 0, res.stderr
    assert "internal error" not in res.stderr and page.stat().st_size > 0
