"""What a drawing of a big call graph keeps (analysis/callgraph_view.py): the ranked
vertices with their heaviest paths, within the limit; the document keeps everything."""
import re

from heapscope.analysis.callgraph import build_callgraph, document
from heapscope.analysis.callgraph_view import view
from heapscope.analysis.stacks import WeightedStack
from heapscope.render.callgraph_dot import to_dot
from heapscope.symbolize.frames import Frame

EXE = "/opt/app/bin/app"


def fr(name, line):
    return Frame(name, "/src/app.c", line, EXE, line)


def big_graph(n=300):
    """n leaves under n mids under one of 3 phases, all under main; leaf 0's path carries
    the most allocations."""
    stacks = []
    for i in range(n):
        chain = (Frame("malloc", "", 0, "/usr/lib/x86_64-linux-gnu/libc.so.6", 1),
                 fr(f"leaf{i}", 1000 + i), fr(f"mid{i}", 2000 + i), fr(f"phase{i % 3}", 3000 + i % 3),
                 Frame("main", "/src/app.c", 2, EXE, 2))
        stacks.append(WeightedStack(chain, 10_000 if i == 0 else 10 + i, 100, "(none)", 16))
    return build_callgraph(stacks, main_executable=EXE)


def test_a_big_graph_draws_its_ranked_part():
    g = big_graph()
    part = view(g, top=20, limit=60)
    assert len(part.keep) <= 60 and part.hidden == len(g.vertices) - len(part.keep) > 500
    names = {g.vertices[k].function for k in part.keep}
    assert {"leaf0", "mid0", "phase0", "main", "malloc"} <= names
    for v in g.ranking[:5]:
        assert v.key in part.keep
    dot = to_dot(g, "t", highlight=20, view=part)
    nodes = [line for line in dot.splitlines() if re.match(r"\s+(v\d+|more) \[label=", line)]
    assert len(nodes) == len(part.keep) + 1          # + the summary box
    assert f"not drawn: {part.hidden:,} more vertices" in dot
    doc = document(g, 20, "16", None)
    assert len(doc["vertices"]) == len(g.vertices) and len(doc["edges"]) == len(g.edges)


def test_a_small_graph_is_drawn_whole():
    g = big_graph(5)
    part = view(g, top=20, limit=60)
    assert part.complete and part.keep == set(g.vertices)
    assert "not drawn" not in to_dot(g, "t", view=part)
    assert view(big_graph(), top=20, limit=0).complete
