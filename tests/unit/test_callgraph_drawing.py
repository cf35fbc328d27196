"""Drawing a call graph with graphviz, for `callgraph --svg` and the HTML page
(render/callgraph_dot.py): without `dot`, one note naming the drawing as the user knows
it, never a temporary file's path."""
import shutil

from heapscope.analysis.callgraph import build_callgraph
from heapscope.analysis.stacks import WeightedStack
from heapscope.render import callgraph_dot
from heapscope.render.html.stacks import callgraph_svg
from heapscope.symbolize.frames import Frame

EXE = "/build/app"


def graph():
    frames = (Frame("operator new(unsigned long)", "", 0, "/usr/lib/libstdc++.so.6", 1, False),
              Frame("make", "/src/app.c", 12, EXE, 12, False),
              Frame("main", "/src/app.c", 30, EXE, 30, False))
    return build_callgraph([WeightedStack(frames, 7, 84, "(none)", 12)], main_executable=EXE)


def test_without_dot_the_page_says_so_in_plain_words(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    svg, note = callgraph_svg(graph(), "size 12", seconds=5)
    assert svg is None
    assert note == "graphviz `dot` not found: the call graph not drawn (apt-get install graphviz)"


def test_without_dot_callgraph_svg_names_the_file(monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    out = tmp_path / "g.svg"
    note = callgraph_dot.write_svg("digraph g {}", out)
    assert note == f"graphviz `dot` not found: {out} not drawn (apt-get install graphviz)"
    assert not out.exists()


def test_with_dot_the_page_inlines_the_svg_and_the_file_is_written(tmp_path):
    svg, note = callgraph_svg(graph(), "size 12", seconds=60)
    assert note is None and svg.startswith("<svg") and "make" in svg
    out = tmp_path / "g.svg"
    assert callgraph_dot.write_svg("digraph g { a -> b }", out) is None
    assert "<svg" in out.read_text()
