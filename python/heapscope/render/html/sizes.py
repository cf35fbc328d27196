"""Section 2, sizes x regions: the identify table (the `report` document) sortable and as a
heat map, the size groups, the hot sizes per region. A size whose stacks were recorded
links to its flame graph."""
ID, TITLE, SCRIPT = "sizes", "Sizes x regions", "sizes.js"


def data(docs: dict) -> dict:
    report = docs["report"]
    stacks = docs["stacks"]
    with_stacks = [] if "absent" in stacks else sorted({g["size"] for g in stacks["groups"]})
    keep = ("regions", "distinct_sizes", "sizes", "totals", "groups", "hot_sizes", "api")
    return dict({k: report[k] for k in keep}, with_stacks=with_stacks)
