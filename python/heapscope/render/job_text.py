"""Text and CSV of the job report document (analysis.job.build).

CSV header: section,rank,host,region,metric,seconds,value
  rank            one row per rank and metric (value empty when the rank lacks it:
                  a rank without a snapshot has no allocation counts)
  min, max        the extreme rank (rank, host) of each metric; mean: rank "all";
  ranks           how many ranks have the metric (rank "all")
  region-min, region-max, region-mean   the same per region (region column set)
  timeline        one row per grid point, series (metric app/mpi/rss/pss/recorder) and rank
                  (rank "all" for the sum over ranks); seconds since the earliest start
"""
import csv
import io
from typing import List, Sequence, Tuple

from heapscope.render import job_peak_stacks_text
from heapscope.render.notes import collapse
from heapscope.render.text import counted, num, shorten, sparkline, table

SPARK_WIDTH = 60
MAX_WARNINGS = 10
SHORT = {"alloc_blocks": "blocks", "alloc_app_blocks": "app blocks", "alloc_mpi_blocks": "MPI blocks",
         "alloc_bytes": "bytes", "alloc_app_bytes": "app bytes", "alloc_mpi_bytes": "MPI bytes",
         "heap_peak": "heap peak", "heap_app_peak": "app heap peak", "heap_mpi_peak": "MPI heap peak",
         "rss_peak": "RSS peak", "pss_peak": "PSS peak", "recorder_peak": "recorder",
         "mpi_rss": "MPI RSS", "mpi_pss": "MPI PSS", "tracked_peak": "tracked peak"}
PER_RANK_COLUMNS = ("alloc_app_bytes", "alloc_mpi_bytes", "alloc_app_blocks", "alloc_mpi_blocks",
                    "heap_peak", "heap_app_peak", "heap_mpi_peak", "rss_peak", "pss_peak",
                    "recorder_peak", "mpi_rss", "mpi_pss", "tracked_peak")
REGION_TITLES = (("alloc_app_bytes", "app bytes"), ("alloc_mpi_bytes", "MPI bytes"),
                 ("heap_peak", "sampled heap peak"))
SAMPLED_NOTE = ("* sampled: the largest timeline sample, a lower bound (a peak between two "
                "samples is missed)")
RECORDER_NOTE = ("RSS and PSS are the program's: the recorder's own memory (its tables, rings, "
                 "buffers) is left out of them and shown apart as \"recorder\"")


def _value(v) -> str:
    if v is None:
        return "-"
    return num(v) if isinstance(v, int) else f"{v:,.1f}"


def render(doc: dict, max_ranks: int = 64, verbose: bool = False) -> str:
    """verbose: every note on its own line (otherwise one line per kind of note)."""
    hosts = doc["hosts"]
    out = [f"heapscope job report: job {doc['job_id'] or '(no id)'}, {counted(doc['ranks'], 'rank')} on "
           f"{counted(len(hosts), 'host')} ({shorten(hosts, 4)})",
           f"  program   {' | '.join(doc['executables'])}"]
    for label, line in others_text(doc["others"]):
        out.append(f"  {label:<9} {line}")
    for note in collapse(doc["notes"], verbose):
        out.append(f"  note      {note}")
    for w in doc["warnings"]:
        out.append(f"  warning   {w}")
    per_rank = doc["per_rank"]
    # (a job file's 10^5 rows have no warnings: its RankRows lists those that have)
    with_warnings = per_rank.with_warnings() if hasattr(per_rank, "with_warnings") else per_rank
    warnings = [f"rank {r['rank']}: {w}" for r in with_warnings for w in r["warnings"]]
    for w in warnings[:MAX_WARNINGS]:
        out.append(f"  warning   {w}")
    if len(warnings) > MAX_WARNINGS:
        out.append(f"  warning   ... and {len(warnings) - MAX_WARNINGS} more (all are in --format json)")
    for label, line in endings_text(doc.get("endings")):
        out.append(f"  {label:<9} {line}")

    out += ["", "Across ranks (min and max: which rank on which host)"]
    rows = []
    for m in doc["metrics"]:
        s = doc["stats"][m["key"]]
        rows.append([m["title"], _value(s["min"]), f"r{s['min_rank']}", s["min_host"],
                     _value(s["max"]), f"r{s['max_rank']}", s["max_host"], _value(s["mean"]),
                     str(s["ranks"])])
    out.append(table(["metric", "min", "rank", "host", "max", "rank", "host", "mean", "ranks"],
                     rows))
    jf = doc.get("job_file")
    if doc["timeline"] is None and jf is None:
        out.append("  (no timeline samples in these profiles: heap, RSS and PSS peaks need them)")

    keys = [k for k in PER_RANK_COLUMNS if k in doc["stats"]]
    if "alloc_app_bytes" not in doc["stats"]:     # no application/MPI split: the totals
        keys = [k for k in ("alloc_bytes", "alloc_blocks") if k in doc["stats"]] + keys
    out += ["", "Per rank"]
    shown = doc["per_rank"] if max_ranks <= 0 else doc["per_rank"][:max_ranks]
    rows = [[f"r{r['rank']}", r["host"], str(r["pid"]), _ended(r)]
            + [_value(r[k]) for k in keys] for r in shown]
    sampled = {m["key"] for m in doc["metrics"] if m.get("sampled")}
    out.append(table(["rank", "host", "pid", "ended"]
                     + [SHORT[k] + ("*" if k in sampled else "") for k in keys], rows, left=4))
    if sampled & set(keys):
        out.append(f"  {SAMPLED_NOTE}")
    if "recorder_peak" in keys:
        out.append(f"  {RECORDER_NOTE}")
    if len(shown) < len(doc["per_rank"]):
        out.append(f"  ... {counted(len(doc['per_rank']) - len(shown), 'more rank', 'more ranks')} (--ranks 0 shows all; "
                   f"JSON and CSV have all)")

    if jf is not None:
        out += _job_file_text(jf, verbose)
    if not doc["regions"]:
        out += _timeline_text(doc, max_ranks)
        return "\n".join(out).rstrip() + "\n"
    out += ["", "Per region (over ranks: min, max with its rank, mean)"]
    rows = []
    for reg in doc["regions"]:
        row = [reg["region"]]
        for key, _ in REGION_TITLES:
            s = reg[key]
            row += ["-", "-", "-"] if s is None else \
                [_value(s["min"]), f"{_value(s['max'])} (r{s['max_rank']})", _value(s["mean"])]
        rows.append(row)
    header = ["region"] + [f"{title} {w}" for _, title in REGION_TITLES for w in ("min", "max", "mean")]
    out.append(table(header, rows))
    out += _timeline_text(doc, max_ranks)
    return "\n".join(out).rstrip() + "\n"


def _job_file_text(jf: dict, verbose: bool = False) -> List[str]:
    """The job file's own sections: its source line, per host, per region summed."""
    kept = [str(r) for r in jf["kept"]]
    out = ["", f"From the job file {jf['path'].rsplit('/', 1)[-1]} ({counted(jf['summarized'], 'rank')} "
               f"of {jf['size']} reduced at MPI_Finalize in {jf['reduce_ms']:.1f} ms; "
               f"--per-rank {jf['per_rank']}: {counted(len(kept), 'rank')} kept "
               f"{'its' if len(kept) == 1 else 'their'} own file{'' if len(kept) == 1 else 's'}"
               f"{': ' + shorten(kept, 8) if kept else ''}; no timelines or per-rank regions)",
           "", "Per host (RSS and PSS peaks of its ranks, the program's, and the recorder's own "
               "memory apart: sum and largest)"]
    rows = [[h["host"], str(h["ranks"]), _value(h["rss_sum"]), _value(h["rss_max"]),
             _value(h["pss_sum"]), _value(h["pss_max"]), _value(h.get("recorder_sum")),
             _value(h.get("recorder_max"))] for h in jf["hosts"]]
    out.append(table(["host", "ranks", "RSS sum", "RSS max", "PSS sum", "PSS max", "recorder sum",
                      "recorder max"], rows, left=2))
    out += ["", "Per region (allocated, summed over the ranks)"]
    rows = [[r["region"], _value(r["alloc_app_bytes"]), _value(r["alloc_mpi_bytes"]),
             _value(r["alloc_app_blocks"]), _value(r["alloc_mpi_blocks"])] for r in jf["regions"]]
    out.append(table(["region", "app bytes", "MPI bytes", "app blocks", "MPI blocks"], rows))
    return out + job_peak_stacks_text.lines(jf.get("peak_stacks"), verbose=verbose)


def _ended(r: dict) -> str:
    """The per-rank table's cell, one word: exit, crash:SIGSEGV, MPI_Abort(17),
    killed:SIGTERM, exit-early (exited before MPI_Finalize), none (no snapshot), exec, api."""
    ended = r.get("ended", r["reason"])
    if ended == "crash":
        return f"crash:{r['signal'] or '?'}"
    if ended == "mpi-abort":
        return r["text"]
    if ended == "killed":
        return f"killed:{r['signal']}"
    if ended == "no-finalize":
        return "exit-early"
    return "none" if ended == "no-snapshot" else ended


def endings_text(endings) -> List[Tuple[str, str]]:
    """(label, line) pairs: the ranks that crashed (of which signal), called MPI_Abort
    (with which code), were killed (the launcher tearing the job down, a scheduler), and
    the rank numbers with no file."""
    if not endings:
        return []
    lines = []
    if endings["crashed"]:
        lines.append(("crashed", ", ".join(f"rank {c['rank']} ({c['signal'] or 'a fatal signal'})"
                                           for c in endings["crashed"][:12])
                      + (", ..." if len(endings["crashed"]) > 12 else "")
                      + ": counts from the crash handler's snapshot"))
    if endings["aborted"]:
        lines.append(("aborted", ", ".join(f"rank {a['rank']} called MPI_Abort({a['error_code']})"
                                           for a in endings["aborted"][:12])
                      + (", ..." if len(endings["aborted"]) > 12 else "")))
    killed = [str(k["rank"]) for k in endings["killed"]]
    if killed:
        signals = sorted({k["signal"] for k in endings["killed"]})
        lines.append(("killed", f"{'ranks' if len(killed) != 1 else 'rank'} {shorten(killed, 12)} by "
                                f"{'/'.join(signals)} (the launcher ending the job, or a scheduler): "
                                f"{'their' if len(killed) != 1 else 'its'} last snapshot, written on "
                                f"the signal"))
    bare = [str(n) for n in endings["no_snapshot"]]
    if bare:
        lines.append(("killed", f"{'ranks' if len(bare) != 1 else 'rank'} {shorten(bare, 12)} without "
                                f"a final snapshot (SIGKILL): {'their' if len(bare) != 1 else 'its'} "
                                f"last timeline data"))
    nothing = [str(n) for n in endings.get("no_data", [])]
    if nothing:
        lines.append(("killed", f"{'ranks' if len(nothing) != 1 else 'rank'} {shorten(nothing, 12)} "
                                f"without any data (no snapshot; killed before the first timeline "
                                f"flush, e.g. by the launcher's SIGKILL)"))
    early = endings.get("unfinalized", [])
    if early:
        ranks = shorten([str(e["rank"]) for e in early], 12)
        calls = sorted({e["text"].split(" before", 1)[0] for e in early})
        orphaned = sum(1 for e in early if e["orphaned"])
        lines.append(("ended", f"{'ranks' if len(early) != 1 else 'rank'} {ranks} exited before "
                               f"MPI_Finalize ({', '.join(calls[:3])})"
                      + (f", {'their' if len(early) != 1 else 'its'} launcher gone first: the job "
                         f"torn down" if orphaned == len(early) else
                         f", {orphaned} of them after their launcher had ended" if orphaned else "")
                      + f": {'their' if len(early) != 1 else 'its'} exit snapshot"))
    missing = [str(n) for n in endings["missing"][:12]]
    total = endings.get("missing_count", len(endings["missing"]))
    if total:
        listed = ", ".join(missing) + (f", ... and {total - len(missing):,} more"
                                       if total > len(missing) else "")
        lines.append(("missing", f"{'ranks' if total != 1 else 'rank'} {listed}: no profile file"))
    return lines


def others_text(others: Sequence[dict]) -> List[Tuple[str, str]]:
    """(label, line) pairs of the header: the pre-exec images in one line (they are
    the ranks' own pids, not other programs), the other processes in another, with
    their role (analysis.job_processes)."""
    lines = []
    pre = [o for o in others if o["role"] == "pre-exec"]
    rest = [o for o in others if o["role"] != "pre-exec"]
    if rest:
        names = [f"{_exe(o)} pid {o['pid']}{_why(o)}" for o in rest]
        n = len(rest)
        lines.append(("other", f"{counted(n, 'process', 'processes')} that "
                               f"{'are' if n != 1 else 'is'} not a rank, left out: "
                               + shorten(names, 4)))
    if pre:
        into_ranks = sorted(o["of_rank"] for o in pre if o["of_rank"] is not None)
        into_pids = [str(o["of_pid"]) for o in pre if o["of_rank"] is None]
        exes = sorted({_exe(o) for o in pre})
        what = []
        if into_ranks:
            what.append(f"rank{'s' if len(into_ranks) != 1 else ''} "
                        + shorten([str(r) for r in into_ranks], 12))
        if into_pids:
            what.append(f"pid{'s' if len(into_pids) != 1 else ''} " + shorten(into_pids, 12))
        n = len(pre)
        lines.append(("pre-exec", f"{n} file{'s' if n != 1 else ''} of {'/'.join(exes)} "
                                  f"written before {'they' if n != 1 else 'it'} exec'd "
                                  f"{' and '.join(what)} (the same process{'es' if n != 1 else ''}"
                                  f" before exec), left out"))
    return lines


def _exe(o: dict) -> str:
    return o["exe"].rsplit("/", 1)[-1] or "?"


def _why(o: dict) -> str:
    role = o["role"]
    if role == "launcher":
        return " (launcher)"
    if role == "rank-child":
        return f" (child of rank {o['of_rank']})"
    if role == "rank-extra":
        return f" (rank {o['of_rank']}, another process)"
    return ""


def _timeline_text(doc: dict, max_ranks: int) -> List[str]:
    tl = doc["timeline"]
    if tl is None:
        return []
    out = ["", f"Timeline: 0 to {tl['end_s']:.3f} s since the first rank started, "
               f"{tl['points']} bins (each bin: its largest value)"]
    rows = []
    for key, title in (("app", "application heap"), ("mpi", "MPI heap"), ("rss", "RSS"), ("pss", "PSS"),
                       ("recorder", "recorder's own")):
        series = tl["total"][key]
        if series is not None:
            rows.append([f"sum {title}", sparkline(series, SPARK_WIDTH), num(max(series))])
    out.append(table(["series", "", "largest"], rows, left=2))
    ranks = tl["per_rank"] if max_ranks <= 0 else tl["per_rank"][:max_ranks]
    top = {k: max([max(r[k]) for r in tl["per_rank"] if r[k]] or [0]) for k in ("app", "mpi")}
    rows = []
    for r in ranks:
        for key, title in (("app", "app"), ("mpi", "MPI")):
            if r[key] is not None:
                rows.append([f"r{r['rank']}" if key == "app" else "", title,
                             sparkline(r[key], SPARK_WIDTH, top=top[key] or None), num(max(r[key]))])
    if rows:
        out += ["", "Per rank (application and MPI heap, one scale per panel)"]
        out.append(table(["rank", "heap", "", "largest"], rows, left=3))
    return out


def render_csv(doc: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["section", "rank", "host", "region", "metric", "seconds", "value"])
    keys = [m["key"] for m in doc["metrics"]]
    for r in doc["per_rank"]:
        for k in keys:
            w.writerow(["rank", r["rank"], r["host"], "", k, "", "" if r[k] is None else r[k]])
    for k in keys:
        s = doc["stats"][k]
        w.writerow(["min", s["min_rank"], s["min_host"], "", k, "", s["min"]])
        w.writerow(["max", s["max_rank"], s["max_host"], "", k, "", s["max"]])
        w.writerow(["mean", "all", "", "", k, "", s["mean"]])
        w.writerow(["ranks", "all", "", "", k, "", s["ranks"]])
    for reg in doc["regions"]:
        for k, _ in REGION_TITLES + (("alloc_app_blocks", ""), ("alloc_mpi_blocks", "")):
            s = reg[k]
            if s is None:
                continue
            w.writerow(["region-min", s["min_rank"], s["min_host"], reg["region"], k, "", s["min"]])
            w.writerow(["region-max", s["max_rank"], s["max_host"], reg["region"], k, "", s["max"]])
            w.writerow(["region-mean", "all", "", reg["region"], k, "", s["mean"]])
    tl = doc["timeline"]
    if tl is not None:
        for key in ("app", "mpi", "rss", "pss", "recorder"):
            for r in tl["per_rank"] + [dict(rank="all", host="", **{key: tl["total"][key]})]:
                if r[key] is None:
                    continue
                for sec, v in zip(tl["seconds"], r[key]):
                    w.writerow(["timeline", r["rank"], r["host"], "", key, f"{sec:.6f}", v])
    return buf.getvalue()
