"""Section 2, sizes x regions: the identify table (the `report` document) sortable and as a
heat map, the size groups, the hot sizes per region. A size whose stacks the page
carries links to its flame graph.

Bounded: the MAX_ROWS sizes with the most allocations are carried, the others counted in
`folded` (`heapscope report --format json` lists every size)."""
from heapscope.render.html.stacks import carried

ID, TITLE, SCRIPT = "sizes", "Sizes x regions", "sizes.js"
MAX_ROWS = 2000


def data(docs: dict) -> dict:
    report = docs["report"]
    stacks = docs["stacks"]
    with_stacks = [] if "absent" in stacks else sorted({g["size"] for g in carried(stacks["groups"])[0]})
    keep = ("regions", "distinct_sizes", "totals", "groups", "hot_sizes", "api")
    ranked = sorted(report["sizes"], key=lambda r: (-r["total_count"], r["size"]))
    kept, rest = {r["size"] for r in ranked[:MAX_ROWS]}, ranked[MAX_ROWS:]
    return dict({k: report[k] for k in keep}, with_stacks=with_stacks,
                sizes=[r for r in report["sizes"] if r["size"] in kept],   # the report's order
                folded=dict(sizes=len(rest), count=sum(r["total_count"] for r in rest)),
                inputs=docs.get("inputs") or ["INPUT"])
