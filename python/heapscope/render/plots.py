"""The one plot writer (matplotlib, PNG or SVG, written atomically): timelines, the job
report's timelines, benchmark ratios.

  write_timeline_plot(doc, path)     `heapscope timeline --plot`: one process: heap, RSS
                                     and PSS against time, the region spans shaded and
                                     named, MPI caliper samples as ticks; several: a panel
                                     each for heap, RSS and PSS, one line per process
  write_job_plot(doc, path)          `heapscope report --by rank --plot`: one line per rank
                                     in an application and an MPI panel, the sums below
  write_bench_plots(doc, directory)  `heapscope bench --plot DIR`: per metric
                                     bench-<metric>.png and .svg, each configuration's ratio
                                     of means to the baseline with its 95% interval

The format follows the file's suffix; matplotlib is imported only when a plot is drawn.
"""
import io
from pathlib import Path
from typing import List, Sequence

from heapscope.atomic import write_atomic
from heapscope.errors import HeapscopeError
from heapscope.render.text import counted

SUFFIXES = (".png", ".svg")
MIB = 1024.0 * 1024.0


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise HeapscopeError("--plot needs matplotlib: pip install matplotlib") from None
    return plt


def check_path(path, option: str = "--plot") -> str:
    """The format of a plot file from its suffix (png, svg); anything else is an error."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise HeapscopeError(f"{option} {path}: the file name must end in .png or .svg")
    return suffix[1:]


def _save(plt, fig, path, fmt: str, close: bool = True) -> None:
    """The figure into `path` in `fmt` (png, svg), atomically; then closed unless asked."""
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    if close:
        plt.close(fig)
    write_atomic(str(path), buf.getvalue())


# ---- heapscope timeline ----

TIMELINE_SERIES = (("heap_bytes", "heap in use"), ("rss_bytes", "RSS"), ("pss_bytes", "PSS"),
                   ("recorder_bytes", "recorder's own memory"))


def _series_label(label: str, measured: bool) -> str:
    """RSS/PSS are the program's when the recorder measured its own memory (left out)."""
    if label in ("RSS", "PSS"):
        return f"{label}, program" if measured else f"{label} (recorder's memory included)"
    return label


def write_timeline_plot(doc: dict, path) -> None:
    fmt = check_path(path)
    plt = _pyplot()
    procs = doc["processes"]
    fig = _one_process(plt, procs[0]) if len(procs) == 1 else _processes(plt, procs)
    _save(plt, fig, path, fmt)


def _xy(samples, attr):
    pts = [(s["mono_ns"] / 1e9, s[attr] / MIB) for s in samples if s[attr] is not None]
    return [t for t, _ in pts], [v for _, v in pts]


def _one_process(plt, p):
    fig, ax = plt.subplots(figsize=(11, 5))
    measured = p.get("recorder_measured", False)
    for attr, label in TIMELINE_SERIES:
        x, y = _xy(p["samples"], attr)
        if x:
            recorder = attr == "recorder_bytes"
            ax.plot(x, y, label=_series_label(label, measured), drawstyle="steps-post",
                    linewidth=1.0 if recorder else 1.2, linestyle=":" if recorder else "-",
                    color="tab:gray" if recorder else None)
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


def _processes(plt, procs):
    fig, axes = plt.subplots(4, 1, figsize=(11, 10), sharex=True)
    many = len(procs) > 16
    measured = all(p.get("recorder_measured", False) for p in procs)
    for ax, (attr, title) in zip(axes, TIMELINE_SERIES):
        title = _series_label(title, measured)
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


# ---- the job report ----

def write_job_plot(doc: dict, path) -> None:
    fmt = check_path(path)
    tl = doc["timeline"]
    if tl is None:
        raise HeapscopeError("--plot: these profiles hold no timeline samples (heap, RSS, PSS "
                             "over time); only the tables can be reported")
    plt = _pyplot()
    x = tl["seconds"]
    fig, axes = plt.subplots(2, 2, figsize=(12, 7), sharex=True)
    many = len(tl["per_rank"]) > 16
    for ax, key, title in ((axes[0][0], "app", "application heap per rank"),
                           (axes[0][1], "mpi", "MPI heap per rank")):
        for r in tl["per_rank"]:
            if r[key] is not None:
                ax.plot(x, [v / MIB for v in r[key]], linewidth=0.6 if many else 1.2,
                        alpha=0.35 if many else 0.9, label=None if many else f"rank {r['rank']}",
                        drawstyle="steps-post")
        ax.set_title(title)
        ax.set_ylabel("MiB")
        if not many and tl["per_rank"]:
            ax.legend(fontsize="small")
    ax = axes[1][0]
    for key, label in (("app", "application heap"), ("mpi", "MPI heap")):
        if tl["total"][key] is not None:
            ax.plot(x, [v / MIB for v in tl["total"][key]], label=label, drawstyle="steps-post")
    ax.set_title(f"heap, sum over {counted(len(tl['per_rank']), 'rank')}")
    ax.set_ylabel("MiB")
    ax.set_xlabel("seconds since the first rank started")
    ax.legend(fontsize="small")
    ax = axes[1][1]
    drawn = False
    for key, label in (("rss", "RSS, program"), ("pss", "PSS, program"),
                       ("recorder", "recorder's own memory")):
        if tl["total"][key] is not None:
            ax.plot(x, [v / MIB for v in tl["total"][key]], label=label, drawstyle="steps-post",
                    linestyle=":" if key == "recorder" else "-",
                    color="tab:gray" if key == "recorder" else None)
            drawn = True
    ax.set_title("RSS and PSS, sum over ranks" if drawn else "RSS and PSS: not sampled")
    ax.set_ylabel("MiB")
    ax.set_xlabel("seconds since the first rank started")
    if drawn:
        ax.legend(fontsize="small")
    fig.suptitle(f"job {doc['job_id']}: {counted(doc['ranks'], 'rank')}, {', '.join(doc['executables'])}",
                 fontsize="medium")
    fig.tight_layout()
    _save(plt, fig, path, fmt)


# ---- heapscope bench ----

def write_bench_plots(doc: dict, directory, metrics: Sequence[tuple]) -> List[Path]:
    """doc: the bench document (bench.results.document); metrics: (key, title) pairs.
    Returns the files written."""
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HeapscopeError(f"cannot create {out}: {exc.strerror}") from None
    plt = _pyplot()
    commands = doc["commands"]
    configs: List[str] = []
    for r in commands:
        for c in r["configs"]:
            if c["name"] not in configs:
                configs.append(c["name"])
    written = []
    base = commands[0]["baseline"] if commands else ""
    for key, title in metrics:
        fig, ax = plt.subplots(figsize=(min(16.0, max(6.0, 2.0 + 1.0 * len(commands))), 4.5))
        width = 0.8 / max(1, len(configs))
        for k, name in enumerate(configs):
            xs, ys, lows, highs = [], [], [], []
            for i, r in enumerate(commands):
                c = next((c for c in r["configs"] if c["name"] == name), None)
                ratio = c["ratios"].get(key) if c else None
                if ratio is None or ratio["value"] is None:
                    continue
                xs.append(i - 0.4 + width * (k + 0.5))
                ys.append(ratio["value"])
                lows.append(max(0.0, ratio["value"] - ratio["ci"][0]))
                highs.append(max(0.0, ratio["ci"][1] - ratio["value"]))
            if xs:
                ax.bar(xs, ys, width, yerr=[lows, highs], capsize=2, label=name)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(commands)))
        ax.set_xticklabels([r["name"] for r in commands], rotation=30, ha="right")
        ax.set_ylabel(f"{title} / {base}")
        ax.set_title(f"{title}: mean ratio to {base}, 95% bootstrap interval")
        ax.legend(fontsize="small")
        fig.tight_layout()
        for suffix in ("png", "svg"):
            path = out / f"bench-{key}.{suffix}"
            _save(plt, fig, path, suffix, close=False)
            written.append(path)
        plt.close(fig)
    return written
