"""The HTML report's memory-access section in a real browser (record --access of
tests/programs/acc_truths.c): its call paths are the `heapscope access` document's, the
bytes never touched first (the 1 MiB buffers with 64 KiB written lead), and a recording
without --access says how to make one."""
import json

import pytest

from helpers.browser import browser, open_report, shoot, shots  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def measured(build, heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("html-access")
    heapscope("record", "--access", "--sample-bytes", "4096", "-o", root / "rec", "--",
              build("acc_truths.c", "-pthread"), 10, 20, "partial", "unused", "used")
    heapscope("html", root / "rec", "-o", root / "acc.html")
    return root


def test_call_paths_equal_the_access_document(browser, measured, heapscope, shots):  # noqa: F811
    doc = json.loads(heapscope("access", measured / "rec", "--format", "json", "--top", "0").stdout)
    report = open_report(browser, measured / "acc.html", "access")
    try:
        shown = [r.split("\t") for r in
                 report.page.locator("#access .hs-access-paths tbody tr").all_inner_texts()]
        assert len(shown) == min(30, len(doc["entries"]))
        assert [int(r[0]) for r in shown] == [e["rank"] for e in doc["entries"]][:30]
        first = shown[0]
        assert first[-1].startswith("partial_alloc")
        # 40 buffers of 1 MiB at 16 bytes into a page, the first 64 KiB written: 69,616 bytes
        # on touched pages each
        assert doc["entries"][0]["untouched_bytes"] == 40 * ((1 << 20) - 69616)
        assert first[1] == "37.3 MiB" and first[2].strip() == "6.6%"
        assert [r[9] for r in shown] == [f'{e["size"]:,}' for e in doc["entries"]][:30]
        shoot(report, shots, "access")
        assert report.errors == [] and report.requests == []
    finally:
        report.close()


def test_a_recording_without_access_says_how(browser, build, heapscope, tmp_path):  # noqa: F811
    heapscope("record", "-o", tmp_path / "rec", "--", build("acc_truths.c", "-pthread"), 1, 0, "used")
    heapscope("html", tmp_path / "rec", "-o", tmp_path / "plain.html")
    report = open_report(browser, tmp_path / "plain.html", "no-access")
    try:
        assert "record --access" in report.page.locator("#access .hs-absent").inner_text()
        assert report.errors == []
    finally:
        report.close()
