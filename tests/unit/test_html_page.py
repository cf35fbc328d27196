"""`heapscope html` without a browser: the page's data is the analyses' documents, embedded
so that no text in them can end the script element; warnings are said once; bad input
and missing assets give one line."""
import json
import re

import pytest

from heapscope import cli
from heapscope.analysis.page_documents import collect
from heapscope.errors import HeapscopeError
from heapscope.render.html import assets, overview, render_profile_page
from heapscope.analysis import identify
from heapscope.profile import load_profiles

from helpers.profile_builder import ProfileBuilder

HOSTILE = "</script><img src=x onerror=alert(1)>"


@pytest.fixture
def profile(tmp_path):
    b = ProfileBuilder(pid=7)
    b.snapshot(regions=[(1, 0, HOSTILE)], sizes=[(1, 12, 100), (0, 40, 3)], lost=5)
    return b.write(tmp_path / "p.hsp")


def page_data(html):
    m = re.search(r'<script type="application/json" id="hs-data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))


def test_page_carries_the_report_document_and_survives_hostile_names(profile):
    docs = collect([str(profile)])
    html = render_profile_page(docs, "t")
    assert HOSTILE not in html                         # escaped inside the JSON
    data = page_data(html)
    report = identify.build(load_profiles([str(profile)]), hot=10)
    assert data["sizes"]["sizes"] == report["sizes"] and data["sizes"]["totals"] == report["totals"]
    assert data["sizes"]["regions"] == ["(none)", HOSTILE]
    assert [(r["size"], r["counts"][HOSTILE]) for r in data["sizes"]["sizes"]] == [(12, 100), (40, 0)]


def test_warnings_say_each_problem_once(profile):
    docs = collect([str(profile)])
    warnings = overview.warnings(docs)
    assert sum("lost" in w for w in warnings) == 1 and "5 allocations" in " ".join(warnings)


def test_sections_without_data_say_why(profile):
    data = page_data(render_profile_page(collect([str(profile)]), "t"))
    assert "record --track" in data["tracking"]["absent"]
    assert data["stacks"]["absent"].startswith("no stack")
    assert "two" in data["diff"]["absent"]


def test_missing_assets_are_one_line_naming_setup(monkeypatch, tmp_path, profile, capsys):
    monkeypatch.setattr(assets, "VENDORED", tmp_path / "none")
    with pytest.raises(HeapscopeError, match="run scripts/setup.sh"):
        assets.library_scripts()
    assert cli.main(["html", str(profile), "-o", str(tmp_path / "x.html")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "scripts/setup.sh" in err[0]
    assert not (tmp_path / "x.html").exists()


def test_default_output_is_beside_a_file_and_inside_a_directory(profile, capsys):
    assert cli.main(["html", str(profile)]) == 0
    assert (profile.parent / "heapscope-report.html").exists()
    assert capsys.readouterr().out.strip() == f"wrote {profile.parent / 'heapscope-report.html'}"


@pytest.mark.parametrize("args, message", [
    (["a", "b", "c"], "one recording, or two"),
    (["/nonexistent/x.hsp"], "/nonexistent/x.hsp"),
    (["--callgraphs", "-1", "x"], None),
])
def test_bad_input_is_one_line(args, message, capsys):
    try:
        rc = cli.main(["html", *args])
    except SystemExit as exc:     # argparse
        rc = exc.code
    assert rc != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) <= 3 and (message is None or message in err[-1])


def test_a_call_graph_too_big_to_read_is_drawn_in_its_ranked_part():
    """A graph of more functions than a page shows gets its ranking, a drawing of its
    ranked part and a note naming the command that draws it whole, not megabytes of SVG
    (LAMMPS' graphs of 450-760 functions made a 16.8 MB page)."""
    from heapscope.analysis.callgraph import build_callgraph
    from heapscope.analysis.stacks import WeightedStack
    from heapscope.render.html import stacks as section
    from heapscope.symbolize.frames import Frame

    exe = "/opt/app/bin/app"

    def path(i):
        chain = [Frame(f"leaf{i}", "app.c", 10 + i, exe, 100 + i),
                 Frame(f"mid{i}", "app.c", 500 + i, exe, 900 + i),
                 Frame("main", "app.c", 2, exe, 5)]
        return WeightedStack(tuple(chain), 10, 120, "(none)", 12)

    big = build_callgraph([path(i) for i in range(section.MAX_DRAWN)], main_executable=exe)
    small = build_callgraph([path(i) for i in range(3)], main_executable=exe)
    stacks_doc = {"groups": [], "notes": [], "not_recorded": []}
    docs = {"stacks": stacks_doc, "callgraphs": [dict(size=12, region="(none)", graph=big),
                                                 dict(size=12, region="(none)", graph=small)]}
    drawn_big, drawn_small = section.data(docs)["callgraphs"]
    assert drawn_big["svg"].startswith("<svg") and drawn_big["vertices"] > section.MAX_DRAWN
    # the first-ranked function and its path are drawn; most of the others are not
    first = drawn_big["ranking"][0]["function"]
    assert f">{first}<" in drawn_big["svg"] and ">main<" in drawn_big["svg"]
    assert drawn_big["svg"].count("class=\"node\"") <= 61
    assert "more than a page shows" in drawn_big["note"] and "drawn in part" in drawn_big["note"]
    assert ("heapscope callgraph INPUT --size 12 --region '(none)' --svg FILE --max-drawn 0"
            in drawn_big["note"])
    assert drawn_big["ranking"], "the ranking is kept"
    assert drawn_small["svg"].startswith("<svg") and drawn_small["note"] is None
