"""`heapscope diff --before RUN ... --after RUN ...`: several runs per side
(tests/programs/diff_runs.c: a count that varies with the run's seed by a known amount,
one that never varies, one the "regressed" build doubles). A change within the runs'
spread is "within run-to-run variation", per size and per stack type, and
--fail-if-more fails only beyond it; text, JSON, CSV and the HTML page say so."""
import csv
import io
import json
import re

import pytest

VARIATION = "within run-to-run variation"
A_SEEDS, B_SEEDS = (0, 1, 3), (1, 2, 4)      # 32-byte blocks: A 10k, 11k, 10k; B 11k, 12k, 11k


@pytest.fixture(scope="module")
def runs(build, heapscope, tmp_path_factory):
    exe = build("diff_runs.c")
    root = tmp_path_factory.mktemp("diff-runs")

    def record(name, seed, *mode):
        heapscope("record", "-o", root / name, "--sizes", "32,64,128", "--", exe, str(seed), *mode)
        return str(root / name)
    a = [record(f"a{s}", s) for s in A_SEEDS]
    b = [record(f"b{s}", s, "regressed") for s in B_SEEDS]
    same = [record(f"s{s}", s) for s in B_SEEDS]       # B's seeds, not regressed: noise only
    return a, b, same


def sides(a, b):
    return [x for run in a for x in ("--before", run)] + [x for run in b for x in ("--after", run)]


def test_rows_are_means_with_their_spread(heapscope, runs):
    a, b, _ = runs
    doc = json.loads(heapscope("diff", *sides(a, b), "--stacks", "--format", "json").stdout)
    assert doc["runs"] == {"a": 3, "b": 3}
    rows = {r["size"]: r for r in doc["sizes"]}
    noisy, steady, grows = rows[32], rows[64], rows[128]
    assert (noisy["count_a"], noisy["count_b"]) == (10333, 11333)
    assert (noisy["count_a_min"], noisy["count_a_max"], noisy["count_b_min"], noisy["count_b_max"]) == \
        (10000, 11000, 11000, 12000)
    assert noisy["status"] == VARIATION
    assert (steady["delta"], steady["status"]) == (0, "same")
    assert (grows["count_a"], grows["count_b"], grows["status"]) == (3000, 6000, "more")
    total = doc["total"]
    assert (total["count_a_min"], total["count_a_max"], total["count_b_min"], total["count_b_max"]) == \
        (18000, 19000, 22000, 23000)
    assert total["status"] == "more"
    by_function = {s["frames"][1]["function"]: s for s in doc["stacks"]}
    assert by_function["noisy"]["status"] == VARIATION
    assert by_function["grows"]["status"] == "more"
    assert by_function["steady"]["status"] == "same"


def test_fail_if_more_honours_the_spread(heapscope, runs):
    a, b, same = runs
    # noise only: the same program, other seeds. One run against one fails on it ...
    one = heapscope("diff", a[0], same[1], "--fail-if-more", "0", check=False)
    assert one.returncode == 1 and "allocations rose by" in one.stderr
    # ... three runs a side do not
    res = heapscope("diff", *sides(a, same), "--fail-if-more", "0", check=False)
    assert res.returncode == 0, res.stderr
    assert VARIATION in res.stdout
    # a real regression: B's lowest run (22,000) is 15.79% above A's highest (19,000)
    assert heapscope("diff", *sides(a, b), "--fail-if-more", "20").returncode == 0
    res = heapscope("diff", *sides(a, b), "--fail-if-more", "15", check=False)
    assert res.returncode == 1
    assert ("allocations rose beyond run-to-run variation: B's lowest run is 15.79% above A's "
            "highest (A's 3 runs 18,000..19,000, B's 3 22,000..23,000), more than the 15% allowed"
            ) in res.stderr


def test_text_and_csv(heapscope, runs):
    a, b, _ = runs
    text = heapscope("diff", *sides(a, b), "--stacks").stdout
    assert "Runs: A 3, B 3; before and after are their means" in text
    assert "Allocations per run: A 18,000..19,000, B 22,000..23,000 (more)" in text
    line = next(l for l in text.splitlines() if re.match(r"\(none\)\s+32 B", l))
    assert line.split()[3:7] == ["10,333", "11,333", "10,000..11,000", "11,000..12,000"]
    assert line.endswith(VARIATION)
    assert re.search(r"\(none\) 128 B: 3,000 -> 6,000 \[A 3,000..3,000, B 6,000..6,000\] \(more\)", text)
    rows = list(csv.DictReader(io.StringIO(heapscope("diff", *sides(a, b), "--format", "csv").stdout)))
    noisy = next(r for r in rows if r["kind"] == "size" and r["size"] == "32")
    assert (noisy["runs_a"], noisy["count_a_min"], noisy["count_b_max"], noisy["status"]) == \
        ("3", "10000", "12000", VARIATION)


def test_html_page_shows_the_spread(heapscope, runs, tmp_path):
    a, b, _ = runs
    page = tmp_path / "diff.html"
    heapscope("diff", *sides(a, b), "--stacks", "--html", page)
    html = page.read_text()
    assert '"runs": {"a": 3, "b": 3}' in html or '"runs":{"a":3,"b":3}' in html
    assert html.count(VARIATION) >= 2          # the script's table, the rows' status


@pytest.mark.parametrize("args,message", [
    (["A", "--after", "B"], "diff takes A B, or --before RUN ... --after RUN ..., not both"),
    (["--before", "A"], "diff: --after RUN is missing: each side needs one run or more"),
    (["A"], "diff needs two recordings: heapscope diff A B"),
])
def test_bad_sides(heapscope, args, message):
    res = heapscope("diff", *args, check=False)
    assert res.returncode == 2
    [line] = res.stderr.strip().splitlines()
    assert message in line
