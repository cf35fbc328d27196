"""Section 4, lifetimes, temporaries, peak and leaks (record --track / --trace): the four
tracking documents as `heapscope lifetimes`, `temporaries`, `peak` and `leaks` build them
(every size, the top 20 stack trace types of each).

Bounded: the page draws the lifetimes of a size (its histograms), not of its stack
types, so those are left out; the MAX_SIZES sizes with the most allocations are
carried, the others counted in `folded` (`heapscope lifetimes --format json` has them)."""
ID, TITLE, SCRIPT = "tracking", "Lifetimes, temporaries, peak, leaks", "tracking.js"
MAX_SIZES = 100


def lifetimes(doc: dict) -> dict:
    """The lifetimes document without per-type rows, its sizes bounded."""
    ranked = sorted(doc["sizes"], key=lambda s: (-s["allocs"], s["size"]))
    kept = {s["size"] for s in ranked[:MAX_SIZES]}
    rest = ranked[MAX_SIZES:]
    return dict(doc, sizes=[{k: v for k, v in s.items() if k != "stack_types"}
                            for s in doc["sizes"] if s["size"] in kept],
                folded=dict(sizes=len(rest), allocs=sum(s["allocs"] for s in rest)))


def data(docs: dict) -> dict:
    if "absent" in docs["lifetimes"]:
        return dict(absent=docs["lifetimes"]["absent"])
    return dict(lifetimes=lifetimes(docs["lifetimes"]), temporaries=docs["temporaries"],
                peak=docs["peak"], leaks=docs["leaks"], tracking=docs["tracking"],
                inputs=docs.get("inputs") or ["INPUT"])
