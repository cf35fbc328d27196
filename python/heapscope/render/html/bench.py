"""Section 7, allocator (or profiler) comparison: the `heapscope bench` document (every
run, medians with their bootstrap intervals, ratios to the baseline) laid out as one
chart and one table per workload and metric (`heapscope bench --html FILE`)."""
from heapscope.bench.results import METRICS

ID, TITLE, SCRIPT = "bench", "Allocator comparison", "bench.js"
TITLES = {"allocators": TITLE, "profilers": "Profiler comparison"}


def title(doc: dict) -> str:
    """The section's title for what was compared (bench --profilers compares profilers)."""
    return TITLES.get(doc["settings"].get("mode"), TITLE)


def data(docs: dict) -> dict:
    doc = docs["bench"]
    return dict(settings=doc["settings"], machine=doc["machine"], missing=doc["missing"],
                metrics=[dict(key=k, title=t) for k, t, _ in METRICS],
                commands=[dict(c, configs=[{k: v for k, v in cfg.items() if k != "runs"} |
                                           dict(runs=len(cfg["runs"])) for cfg in c["configs"]])
                          for c in doc["commands"]])
