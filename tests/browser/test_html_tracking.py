"""The HTML report's tracking section in a real browser, for tests/programs/trk_lifetimes.c
recorded with --track (known: 100 temporaries of 48 B, the peak of 8000 B held by two
4000-B blocks, three 200-B blocks never freed in leak_three), equal to the documents of
`heapscope temporaries`, `peak` and `leaks`; and a profile without tracking says so."""
import json

import pytest

from helpers.browser import browser, open_report, shoot, shots  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def tracked(build, heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("html-track")
    heapscope("record", "--track", "--sizes", "all", "-o", root / "rec", "--",
              build("trk_lifetimes.c", "-pthread"))
    heapscope("html", root / "rec", "-o", root / "trk.html")
    return root


@pytest.fixture(scope="module")
def page(browser, tracked):  # noqa: F811
    report = open_report(browser, tracked / "trk.html", "tracking")
    yield report
    report.close()


def rows(page, selector):
    return [r.split("\t") for r in page.page.locator(f"{selector} tbody tr").all_inner_texts()]


def number(text):
    return int(text.replace(",", ""))


def test_temporaries_peak_and_leaks_equal_their_documents(page, tracked, heapscope, shots):  # noqa: F811
    def doc(command):
        return json.loads(heapscope(command, tracked / "rec", "--format", "json", "--top", "0").stdout)
    temps = doc("temporaries")
    shown = rows(page, "#tracking .hs-temporaries")
    assert [(number(r[0]), number(r[1])) for r in shown] == \
        [(s["size"], s["temporaries"]) for s in temps["sizes"]][:30]
    assert (number(shown[0][0]), number(shown[0][1])) == (48, 100)
    peak = doc("peak")["peaks"][0]
    holders = rows(page, "#tracking .hs-peak-holders")
    assert [(number(r[1]), number(r[3]), number(r[4])) for r in holders] == \
        [(t["size"], t["blocks"], t["bytes"]) for t in peak["stack_types"]][:20]
    assert (number(holders[0][1]), number(holders[0][3]), number(holders[0][4])) == (4000, 2, 8000)
    leaks = doc("leaks")
    shown = rows(page, "#tracking .hs-leaks")
    assert [(number(r[1]), number(r[3]), number(r[4])) for r in shown] == \
        [(t["size"], t["blocks"], t["bytes"]) for t in leaks["leaks"]]
    assert ["200", "3", "600"] == shown[0][1:2] + shown[0][3:5] and "leak_three" in shown[0][5]
    assert page.page.locator("#hs-lifetimes .hs-chart").count() == 2
    shoot(page, shots, "tracking")
    assert page.errors == [] and page.requests == []


def test_a_profile_without_tracking_says_how_to_record_it(browser, build, heapscope, tmp_path):  # noqa: F811
    heapscope("record", "-o", tmp_path / "rec", "--", build("trk_lifetimes.c", "-pthread"))
    heapscope("html", tmp_path / "rec", "-o", tmp_path / "plain.html")
    report = open_report(browser, tmp_path / "plain.html", "untracked")
    try:
        text = report.page.locator("#tracking .hs-absent").inner_text()
        assert "record --track" in text
        assert report.page.locator("#stacks .hs-absent").inner_text().startswith("no stack")
        assert report.errors == []
    finally:
        report.close()
