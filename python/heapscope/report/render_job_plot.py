"""The job's timelines as a PNG or SVG (matplotlib): one line per rank in an application
panel and an MPI panel, and below them the sum over ranks (application and MPI heap;
RSS and PSS when sampled). Written atomically; the format follows the file's suffix."""
import io
from pathlib import Path

from heapscope.atomic import write_atomic
from heapscope.errors import HeapscopeError
from heapscope.render.text import counted

FORMATS = (".png", ".svg")
MIB = 1024.0 * 1024.0


def write_plot(doc: dict, path: str) -> None:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise HeapscopeError(f"--plot {path}: the file name must end in .png or .svg")
    tl = doc["timeline"]
    if tl is None:
        raise HeapscopeError("--plot: these profiles hold no timeline samples (heap, RSS, PSS "
                             "over time); only the tables can be reported")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise HeapscopeError("--plot needs matplotlib: pip install matplotlib") from None

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
    for key, label in (("rss", "RSS"), ("pss", "PSS")):
        if tl["total"][key] is not None:
            ax.plot(x, [v / MIB for v in tl["total"][key]], label=label, drawstyle="steps-post")
            drawn = True
    ax.set_title(f"RSS and PSS, sum over ranks" if drawn else "RSS and PSS: not sampled")
    ax.set_ylabel("MiB")
    ax.set_xlabel("seconds since the first rank started")
    if drawn:
        ax.legend(fontsize="small")
    fig.suptitle(f"job {doc['job_id']}: {counted(doc['ranks'], 'rank')}, {', '.join(doc['executables'])}",
                 fontsize="medium")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format=suffix[1:])
    plt.close(fig)
    write_atomic(path, buf.getvalue())
