"""Section 6, diff: two recordings compared (A before, B after) as `heapscope diff --stacks`
compares them (analysis.diff): per size and region before/after, the migrations, the
stack trace types that appeared, went or changed, and a differential flame graph (B's
paths, coloured by their change from A)."""
from typing import Dict, List

from heapscope.analysis.diff import Change
from heapscope.analysis.stacks import frame_name
from heapscope.symbolize.names import short_name

ID, TITLE, SCRIPT = "diff", "Diff: before and after", "diff.js"
MAX_ROWS = 2000        # size rows carried (the biggest changes; the page says how many more)


def _change(c: Change) -> dict:
    return dict(count_a=c.count_a, count_b=c.count_b, delta=c.delta, ratio=c.ratio,
                bytes_a=c.bytes_a, bytes_b=c.bytes_b, bytes_delta=c.bytes_delta, status=c.status,
                percent=c.percent("count"))


def data(docs: dict) -> dict:
    d = docs["diff"]
    if "absent" in d:
        return dict(absent=d["absent"])
    names: Dict[object, int] = {}
    table: List[str] = []

    def frames(stack) -> List[int]:
        out = []
        for f in stack.frames:
            name = short_name(frame_name(f))   # as the text reports print them
            if name not in names:
                names[name] = len(table)
                table.append(name)
            out.append(names[name])
        return out

    stacks = None
    if d["stacks"] is not None:
        stacks = [dict(_change(s), region=s.region, size=s.size, frames=frames(s.stack))
                  for s in d["stacks"]]
    return dict(
        a=docs["inputs"], b=docs["compare"], processes=list(d["processes"]),
        total=_change(d["total"]), rows=len(d["sizes"]),
        sizes=[dict(_change(r), region=r.region, size=r.size) for r in d["sizes"][:MAX_ROWS]],
        migrations=[dict(region=m.region, fell=[dict(size=r.size, delta=r.delta) for r in m.fell],
                         rose=[dict(size=r.size, delta=r.delta) for r in m.rose])
                    for m in d["migrations"]],
        names=table, stacks=stacks,
        path_migrations=[dict(region=m.region, before=[list(x) for x in m.before],
                              after=[list(x) for x in m.after], frames=frames(m.stack))
                         for m in d["path_migrations"]])
