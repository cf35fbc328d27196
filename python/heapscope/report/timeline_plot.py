"""`heapscope timeline --plot FILE.png|FILE.svg` (matplotlib), written atomically.

One process: heap, RSS and PSS against time, the region spans shaded and named, MPI
caliper samples as ticks. Several processes: a panel each for heap, RSS and PSS with
one line per process (same time axis: seconds since each process started).
"""
import io
from pathlib import Path

from heapscope.atomic import write_atomic
from heapscope.errors import HeapscopeError

FORMATS = (".png", ".svg")
MIB = 1024.0 * 1024.0
SERIES = (("heap_bytes", "heap in use"), ("rss_bytes", "RSS"), ("pss_bytes", "PSS"))


def write_plot(doc: dict, path: str) -> None:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise HeapscopeError(f"--plot {path}: the file name must end in .png or .svg")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise HeapscopeError("--plot needs matplotlib: pip install matplotlib") from None
    procs = doc["processes"]
    if len(procs) == 1:
        fig = _one(plt, procs[0])
    else:
        fig = _many(plt, procs)
    buf = io.BytesIO()
    fig.savefig(buf, format=suffix[1:])
    plt.close(fig)
    write_atomic(path, buf.getvalue())


def _xy(samples, attr):
    pts = [(s["mono_ns"] / 1e9, s[attr] / MIB) for s in samples if s[attr] >= 0]
    return [t for t, _ in pts], [v for _, v in pts]


def _one(plt, p):
    fig, ax = plt.subplots(figsize=(11, 5))
    for attr, label in SERIES:
        x, y = _xy(p["samples"], attr)
        if x:
            ax.plot(x, y, label=label, drawstyle="steps-post", linewidth=1.2)
    top_regions = [r for r in p["regions"] if r["depth"] == 0]
    end = p["duration_s"]
    for i, r in enumerate(p["regions"]):
        r_end = r["end_s"] if r["end_s"] is not None else end
        shade = 0.10 + 0.06 * (i % 2) if r["depth"] == 0 else 0.05
        ax.axvspan(r["begin_s"], r_end, color="tab:gray", alpha=shade, linewidth=0)
        if r["depth"] == 0 and len(top_regions) <= 40:
            ax.text((r["begin_s"] + r_end) / 2, 1.0, r["name"], transform=ax.get_xaxis_transform(),
                    ha="center", va="bottom", fontsize="x-small", rotation=45 if len(top_regions) > 8 else 0)
    mpi = [s["mono_ns"] / 1e9 for s in p["samples"] if s["kind"] == "mpi-before"]
    if mpi:
        ax.plot(mpi, [0] * len(mpi), "|", color="tab:red", markersize=8,
                label=f"MPI calls measured ({len(mpi)})")
    ax.set_xlabel("seconds since the process started")
    ax.set_ylabel("MiB")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize="small", loc="upper left")
    ax.set_title(f"{p['label']}: {Path(p['exe']).name or p['path']}", fontsize="medium", pad=18)
    fig.tight_layout()
    return fig


def _many(plt, procs):
    fig, axes = plt.subplots(3, 1, figsize=(11, 8), sharex=True)
    many = len(procs) > 16
    for ax, (attr, title) in zip(axes, SERIES):
        drawn = False
        for p in procs:
            x, y = _xy(p["samples"], attr)
            if x:
                ax.plot(x, y, drawstyle="steps-post", linewidth=0.6 if many else 1.1,
                        alpha=0.4 if many else 0.9, label=None if many else p["label"])
                drawn = True
        ax.set_title(title if drawn else f"{title}: not measured", fontsize="medium")
        ax.set_ylabel("MiB")
        if drawn and not many:
            ax.legend(fontsize="x-small", loc="upper left")
    axes[-1].set_xlabel("seconds since each process started")
    fig.suptitle(f"{len(procs)} processes", fontsize="medium")
    fig.tight_layout()
    return fig
