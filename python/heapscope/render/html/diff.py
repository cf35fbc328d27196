"""Section 6, diff: two recordings compared (A before, B after) as `heapscope diff --stacks`
compares them (analysis.diff): per size and region before/after, the migrations, the
stack trace types that appeared, went or changed, and a differential flame graph (B's
paths, coloured by their change from A)."""
from typing import Dict, List

from heapscope.analysis.stacks import frame_name
from heapscope.symbolize import Frame
from heapscope.symbolize.names import short_name

ID, TITLE, SCRIPT = "diff", "Diff: before and after", "diff.js"
MAX_ROWS = 2000        # size rows carried (the biggest changes; the page says how many more)


def data(docs: dict) -> dict:
    d = docs["diff"]
    if "absent" in d:
        return dict(absent=d["absent"])
    names: Dict[str, int] = {}
    table: List[str] = []

    def frames(rows: List[dict]) -> List[int]:
        out = []
        for f in rows:
            name = short_name(frame_name(Frame(offset=0, **f)))   # as the text reports print it
            if name not in names:
                names[name] = len(table)
                table.append(name)
            out.append(names[name])
        return out

    stacks = None
    if "stacks" in d:
        stacks = [dict(s, frames=frames(s["frames"])) for s in d["stacks"]]
    return dict(
        a=docs["inputs"], b=docs["compare"], processes=d["processes"], warnings=d["warnings"],
        runs=d.get("runs", dict(a=1, b=1)),
        total=dict(d["total"], percent=d["percent"]["count"]), rows=len(d["sizes"]),
        sizes=d["sizes"][:MAX_ROWS], migrations=d["migrations"], names=table, stacks=stacks,
        path_migrations=[dict(m, frames=frames(m["frames"])) for m in d.get("path_migrations", [])])
