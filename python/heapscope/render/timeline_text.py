"""Text and CSV of the `heapscope timeline` document (analysis.timeline.document).

One process: a sparkline each for heap, RSS and PSS (the program's) and the recorder's
own memory over the run with its peak (value, when, region), the region spans, the MPI
calipers. Several processes: one line per process (heap sparkline and the peaks), so a
job's ranks line up.
"""
import csv
import io
import sys
from typing import List, Optional

from heapscope.render.text import ASCII_BLOCKS, BLOCKS, counted, num, sparkline, table

MEASURES = {"usable": "usable bytes (malloc_usable_size)", "requested": "requested bytes (tracking)",
            "none": "not measured"}
SERIES_TITLES = (("heap", "heap_bytes", "heap"), ("rss", "rss_bytes", "RSS"),
                 ("pss", "pss_bytes", "PSS"), ("recorder", "recorder_bytes", "rec."))
RECORDER_LINE = ("  RSS and PSS: the program's, the recorder's own memory (its tables, rings, "
                 "buffers: rec.) left out of them")
OLD_RECORDER_LINE = ("  RSS and PSS include the recorder's own memory (its tables: recorded by an "
                     "older heapscope, which did not measure it)")


def size(n: Optional[int]) -> str:
    """1536 -> "1.5 KiB"; None or negative -> "-"."""
    if n is None or n < 0:
        return "-"
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024.0
        if value < 1024.0 or unit == "TiB":
            return f"{value:.1f} {unit}"
    return f"{n} B"


def _blocks() -> str:
    enc = (getattr(sys.stdout, "encoding", None) or "ascii").lower()
    try:
        BLOCKS.encode(enc)
        return BLOCKS
    except (UnicodeEncodeError, LookupError):
        return ASCII_BLOCKS


def _line(samples: List[dict], key: str, end_s: float, width: int, blocks: str) -> str:
    """The value over time in `width` columns: the highest sample of each column, a column
    without a sample keeps the last value before it (a step function); ' ' before the
    first measured sample. Scaled from the lowest to the highest value (both printed
    beside it), so a change on top of a large base still shows."""
    points = [(s["mono_ns"] / 1e9, s[key]) for s in samples if s[key] is not None]
    if not points:
        return ""
    span = end_s if end_s > 0 else 1e-9
    cols: List[Optional[int]] = [None] * width
    for t, v in points:
        i = min(width - 1, int(t / span * width))
        cols[i] = v if cols[i] is None else max(cols[i], v)
    last = None
    for i, v in enumerate(cols):
        cols[i] = last = last if v is None else v
    return sparkline(cols, low=min(v for _, v in points), top=max(v for _, v in points),
                     blocks=blocks)


def _peak_text(peak: Optional[dict], low: Optional[int] = None) -> str:
    if peak is None:
        return "not measured"
    lowest = f"low {size(low)}, " if low is not None else ""
    return f"{lowest}sampled peak {size(peak['bytes'])} at {peak['at_s']:.3f} s ({peak['region']})"


def _low(samples: List[dict], key: str) -> Optional[int]:
    values = [s[key] for s in samples if s[key] is not None]
    return min(values) if values else None


def render(doc: dict, width: int = 60) -> str:
    procs = doc["processes"]
    if len(procs) == 1:
        return "\n".join(_one(procs[0], width)) + "\n"
    return "\n".join(_many(procs, width)) + "\n"


def _one(p: dict, width: int) -> List[str]:
    blocks = _blocks()
    interval = f"every {p['interval_ns'] / 1e6:g} ms" if p["interval_ns"] else "no periodic samples"
    kinds = ", ".join(f"{num(n)} {k}" for k, n in p["kinds"].items())
    out = [f"Timeline of {p['label']}: {p['exe']}",
           f"  {p['path']}",
           f"  {counted(p['sample_count'], 'sample')} over {p['duration_s']:.3f} s ({interval}): {kinds}",
           f"  heap in use: {MEASURES.get(p['heap_measure'], p['heap_measure'])}"]
    out += [f"  warning: {w}" for w in p["warnings"]]
    out.append("")
    end = p["duration_s"]
    recorder = p.get("recorder_measured", False)
    for key, attr, title in SERIES_TITLES:
        if key == "recorder" and not recorder:
            continue
        line = _line(p["samples"], attr, end, width, blocks)
        text = _peak_text(p["peaks"][key], _low(p["samples"], attr))
        if key == "heap" and p["heap_measure"] == "none":
            text += " (record with --timeline-heap on)"
        out.append(f"  {title:<5}|{line or ' ' * width}| {text}")
    out.append(f"  {'':<5} 0 s{' ' * max(1, width - 8)}{end:.3f} s")
    if any(p["peaks"][k] is not None for k in ("rss", "pss")):
        out.append(RECORDER_LINE if recorder else OLD_RECORDER_LINE)
    exact = p.get("heap_peaks")
    if exact is not None:
        out.append(f"  heap peak (every allocation and free, not only the samples): "
                   f"{size(exact['heap'])}"
                   + (f"; inside MPI calls {size(exact['heap_mpi'])}, the rest "
                      f"{size(exact['heap_app'])}" if exact["heap_mpi"] else ""))
    if p["peaks"]["heap_mpi"] is not None and p["peaks"]["heap_mpi"]["bytes"] > 0:
        out.append(f"  heap allocated inside MPI calls: {_peak_text(p['peaks']['heap_mpi'])}")
    c = p["calipers"]
    if c["taken"] or c["skipped"]:
        out += ["", f"MPI calipers: {counted(c['taken'], 'call')} measured, {num(c['skipped'])} not "
                    f"(rate limit, nested calls); non-heap memory of the MPI library at its largest: RSS "
                    f"{_maybe(c['rss'])}, PSS {_maybe(c['pss'])} (around the calls that map "
                    f"memory); net change over the measured "
                    f"calls: RSS {_signed(c['mpi_rss_delta_bytes'])}, PSS "
                    f"{_signed(c['mpi_pss_delta_bytes'])}"]
    out += ["", "Regions (process-wide, in order of beginning)"]
    if not p["regions"]:
        out.append("  (no region boundaries)")
    else:
        rows = []
        for r in p["regions"]:
            end_s = "open" if r["end_s"] is None else f"{r['end_s']:.3f}"
            dur = "" if r["end_s"] is None else f"{r['end_s'] - r['begin_s']:.3f}"
            rows.append(["  " * r["depth"] + r["region"], f"{r['begin_s']:.3f}", end_s, dur,
                         size(r["heap_begin"]), size(r["heap_end"]), size(r["rss_begin"]),
                         size(r["rss_end"])])
        out.append(table(["region", "begin s", "end s", "seconds", "heap at begin", "heap at end",
                          "RSS at begin", "RSS at end"], rows))
    return out


def _maybe(v) -> str:
    return "unknown" if v is None else size(v)


def _signed(n: int) -> str:
    return ("-" if n < 0 else "+") + size(abs(n))


def _many(procs: List[dict], width: int) -> List[str]:
    blocks = _blocks()
    end = max(p["duration_s"] for p in procs)
    out = [f"Timelines of {len(procs)} processes (heap in use over 0 .. {end:.3f} s since each "
           f"process started; the samples' peaks with their time; heap peak: counted at every "
           f"allocation and free)", ""]
    rows = []
    for p in procs:
        pk = p["peaks"]
        exact = p.get("heap_peaks")
        rows.append([p["label"], num(p["sample_count"]),
                     "|" + (_line(p["samples"], "heap_bytes", end, width, blocks) or " " * width) + "|",
                     size(exact["heap"]) if exact else "-",
                     _short(pk["heap"]), _short(pk["rss"]), _short(pk["pss"]),
                     _short(pk["recorder"])])
    out.append(table(["process", "samples", "heap over time", "heap peak", "sampled heap peak",
                      "sampled RSS peak", "sampled PSS peak", "recorder's own"], rows, left=1))
    out.append(RECORDER_LINE if all(p.get("recorder_measured") for p in procs) else
               "  RSS and PSS: the program's where the recorder's own memory was measured "
               "(recorder's own), else they include it (an older heapscope)")
    warned = [p for p in procs if p["warnings"]]
    for p in warned:
        out += [f"  {p['label']}: warning: {w}" for w in p["warnings"]]
    return out


def _short(peak: Optional[dict]) -> str:
    return "-" if peak is None else f"{size(peak['bytes'])} @ {peak['at_s']:.2f} s"


def render_csv(doc: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["pid", "rank", "seconds", "kind", "region", "label", "heap_bytes",
                "heap_mpi_bytes", "rss_bytes", "pss_bytes", "recorder_bytes"])
    for p in doc["processes"]:
        for s in p["samples"]:
            w.writerow([p["pid"], "" if p["rank"] is None else p["rank"], f"{s['mono_ns'] / 1e9:.9f}", s["kind"], s["region"],
                        s["label"], *("" if s[k] is None else s[k] for k in
                                      ("heap_bytes", "heap_mpi_bytes", "rss_bytes", "pss_bytes",
                                       "recorder_bytes"))])
    return buf.getvalue()
