"""One chart per metric (PNG and SVG): for each command, the ratio of each
configuration's mean to the baseline's, with the 95% bootstrap interval as error bar."""
import math
from pathlib import Path
from typing import List

from heapscope.bench.results import METRICS, WorkloadResult
from heapscope.errors import HeapscopeError


def write_plots(results: List[WorkloadResult], directory: str) -> List[Path]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise HeapscopeError("--plot needs matplotlib: pip install matplotlib")
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HeapscopeError(f"cannot create {out}: {exc.strerror}")
    configs: List[str] = []
    for r in results:
        for c in r.configs:
            if c.name not in configs:
                configs.append(c.name)
    written = []
    base = results[0].baseline if results else ""
    for key, title, _value in METRICS:
        fig, ax = plt.subplots(figsize=(min(16.0, max(6.0, 2.0 + 1.0 * len(results))), 4.5))
        width = 0.8 / max(1, len(configs))
        for k, name in enumerate(configs):
            xs, ys, lows, highs = [], [], [], []
            for i, r in enumerate(results):
                c = r.config(name)
                ratio = c.ratios.get(key) if c else None
                if ratio is None or math.isnan(ratio.value):
                    continue
                xs.append(i - 0.4 + width * (k + 0.5))
                ys.append(ratio.value)
                lows.append(max(0.0, ratio.value - ratio.ci[0]))
                highs.append(max(0.0, ratio.ci[1] - ratio.value))
            if xs:
                ax.bar(xs, ys, width, yerr=[lows, highs], capsize=2, label=name)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(results)))
        ax.set_xticklabels([r.name for r in results], rotation=30, ha="right")
        ax.set_ylabel(f"{title} / {base}")
        ax.set_title(f"{title}: mean ratio to {base}, 95% bootstrap interval")
        ax.legend(fontsize="small")
        fig.tight_layout()
        for suffix in ("png", "svg"):
            path = out / f"bench-{key}.{suffix}"
            fig.savefig(path)
            written.append(path)
        plt.close(fig)
    return written
