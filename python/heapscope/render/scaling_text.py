"""Text and CSV of the scaling document (analysis.scaling.build).

CSV header: section,mpi_library,by_value,component,figure,ranks,kind,value,low,high,law
  component   one row per measured point (kind "measured") and per predicted rank count
              (kind "predicted", with the 95% interval's low and high, and the law; a
              rival law's prediction is kind "rival"); figure is the JSON field
              (heap_peak_per_rank ...)
  path        the same for a stack type at the peak (component: its innermost functions)
  limit       the rank count where the per-rank figure would exceed the limit (value: the
              limit in bytes; ranks: by the law; high: by its interval's high end)
  side-by-side  per rank count and MPI library its MPI memory (figure: the job metric)
"""
import csv
import io
from typing import List, Optional

from heapscope.render.text import counted, num, table
from heapscope.render.timeline_text import size

FIGURE_TITLES = {"heap_peak_per_rank": "heap peak", "rss_peak_per_rank": "RSS peak",
                 "pss_peak_per_rank": "PSS peak", "nonheap_rss_per_rank": "non-heap RSS",
                 "nonheap_pss_per_rank": "non-heap PSS"}
COEFFICIENT_UNITS = {"1/p": {"b": "x 1/p"}, "p": {"b": "a rank"}, "log p": {"b": "a doubling"}}


def _ranks(n: int) -> str:
    return counted(n, "rank")


def _where(item: dict) -> str:
    by = item.get("by")
    return item["mpi_library"] + (f", {by['variable']}={by['value']}" if by else "")


def _prediction(pred: Optional[dict]) -> str:
    if pred is None:
        return "-"
    if pred["low"] is None:
        return f"{size(pred['value'])} (no interval)"
    if size(pred["low"]) == size(pred["high"]):      # the points lie on the law
        return f"{size(pred['value'])} [+-0]" if pred["low"] == pred["high"] else \
            f"{size(pred['value'])} [+-{size(max(pred['high'] - pred['value'], pred['value'] - pred['low']))}]"
    return f"{size(pred['value'])} [{size(pred['low'])}, {size(pred['high'])}]"


def _law_cell(law: dict) -> str:
    if law["status"] == "chosen":
        return law["law"] + (" ?" if law["rivals"] else "")
    return "too few points" if law["status"] == "too-few-points" else "-"


def _coefficients(law: dict) -> str:
    parts = []
    for name, value in law["coefficients"].items():
        parts.append(f"{name} = {size(round(value)) if value >= 0 else '-' + size(round(-value))}")
    return ", ".join(parts)


def path_label(frames: List[dict], depth: int = 3) -> str:
    """"hold_peers:37 < main": the innermost functions of a call path, the innermost's line."""
    names = [f["function"] or f"{(f['module'] or '?').rsplit('/', 1)[-1]}+{f['offset']:#x}"
             for f in frames[:depth]]
    if names and frames[0]["function"] and frames[0]["line"]:
        names[0] += f":{frames[0]['line']}"     # two calls of one function told apart
    return " < ".join(names) + (" < ..." if len(frames) > depth else "") if names else "(no stack)"


def render(doc: dict, verbose: bool = False) -> str:
    runs = doc["runs"]
    groups = {}
    for r in runs:
        label = (r["mpi_library"] or {}).get("label") or "MPI library unknown"
        groups.setdefault(label + (f", {doc['by']}={r['by_value']}" if doc["by"] else ""),
                          []).append(r["ranks"])
    args = " ".join(doc["arguments"]) or "(no arguments)"
    out = [f"heapscope scaling: {doc['program']} {args}, {counted(len(runs), 'recording')}",
           f"  runs      " + "; ".join(f"{k}: {', '.join(map(str, v))} ranks" for k, v in groups.items()),
           f"  figures   per rank, the largest rank's; laws fitted by least squares, chosen by "
           f"held-out checks; [95% prediction interval]"]
    if doc["limit"]:
        out.append(f"  limit     {size(doc['limit']['bytes'])} a rank ({doc['limit']['source']})")
    for w in doc["warnings"]:
        out.append(f"  warning   {w}")
    targets = doc["targets"]
    for group_paths, group_limit in zip(doc["paths"], doc["limits"]):
        where = _where(group_paths)
        comps = [c for c in doc["components"] if _where(c) == where]
        out += ["", where]
        out += _figures_table(comps, targets)
        out += _law_lines(comps, targets)
        out += _limit_lines(group_limit, doc["limit"], comps)
        out += _path_lines(group_paths, targets)
    for side in doc["side_by_side"]:
        out += _side_lines(side)
    for note in doc["notes"]:
        out.append(f"  note: {note}")
    return "\n".join(out) + "\n"


def _figures_table(comps: List[dict], targets: List[int]) -> List[str]:
    counts = sorted({m["ranks"] for c in comps for m in c["measured"]})
    header = ["figure"] + [_ranks(p) for p in counts] + ["law"] + [_ranks(t) for t in targets]
    rows = []
    for c in comps:
        for fld in c["fields"]:
            law = c["laws"][fld]
            title = f"{c['component']} {FIGURE_TITLES.get(fld, fld)}"
            if fld in c["sampled"]:
                title += " *"
            measured = {}
            for m in c["measured"]:
                if m.get(fld) is not None:
                    measured.setdefault(m["ranks"], m[fld])
            preds = {p["ranks"]: p for p in law.get("predictions", [])}
            rows.append([title] + [size(measured.get(p)) if p in measured else "-" for p in counts]
                        + [_law_cell(law)] + [_prediction(preds.get(t)) for t in targets])
    lines = [table(header, rows, left=1).replace("  law", "  law", 1)]
    if any(c["sampled"] for c in comps):
        lines.append("  * sampled, as the job report marks it: from timeline samples where a rank's recorder "
                     "did not keep the peak exactly, a lower bound")
    if any(c.get("lower_bound") for c in comps):
        lines.append("  library figures: what the module's stack types among each rank's largest "
                     "held at its peak, per rank (record --track): a lower bound")
    return lines


def _law_lines(comps: List[dict], targets: List[int]) -> List[str]:
    out = ["", "  laws"]
    for c in comps:
        for fld in c["fields"]:
            law = c["laws"][fld]
            title = f"{c['component']} {FIGURE_TITLES.get(fld, fld)}"
            out += ["    " + line for line in law_lines(title, law, targets)]
    return out


def law_lines(title: str, law: dict, targets: List[int]) -> List[str]:
    """One figure's law: the chosen one with its coefficients and held-out error, the
    rivals (fit as well, predict differently), or why none was chosen."""
    if law["status"] == "no-points":
        return [f"{title}: not measured"]
    if law["status"] == "too-few-points":
        lines = [f"{title}: no law chosen: {law['why']}"]
        for f in law["through_points"]:
            preds = ", ".join(f"{size(p['value'])} at {p['ranks']}" for p in f["predictions"])
            lines.append(f"  {f['law']} ({f['formula']}) goes through them and predicts {preds}")
        return lines
    lines = [f"{title}: {law['law']}, {law['formula']} with {_coefficients(law)} "
             f"(held-out error {size(law['held_out_error'])}, {law['points']} points)"]
    for r in law["rivals"]:
        preds = ", ".join(f"{_prediction(p)} at {p['ranks']}" for p in r["predictions"])
        lines.append(f"  fits as well, predicts differently: {r['law']} ({r['formula']}, "
                     f"held-out error {size(r['held_out_error'])}): {preds}")
    if law["alike"]:
        lines.append(f"  fit as well and predict alike: {', '.join(law['alike'])}")
    return lines


def _limit_lines(limit: dict, doc_limit: Optional[dict], comps: List[dict]) -> List[str]:
    if not doc_limit:
        return []
    if limit.get("field") is None:
        return ["", "  memory limit: no law of the total heap or RSS peak to check it against"]
    return ["", "  memory limit: " + limit_sentence(limit, doc_limit["bytes"])]


def limit_sentence(limit: dict, nbytes: int) -> str:
    """Where the total per-rank figure meets the limit: measured above it, the fewest
    ranks it fits on, the rank count its law (and its interval's high end) exceeds it."""
    what = f"the total {FIGURE_TITLES[limit['field']]} per rank"
    lim = size(nbytes)
    parts = []
    if limit["measured_above"]:
        parts.append(f"is above {lim} at {', '.join(map(str, limit['measured_above']))} ranks "
                     f"(measured)")
    if limit["fits_from"]:
        parts.append(f"fits under it from {num(limit['fits_from'])} ranks by its law ({limit['law']})")
    if limit["ranks"]:
        parts.append(f"would exceed {lim} at {num(limit['ranks'])} ranks by its law ({limit['law']})")
    elif not limit["measured_above"]:
        parts.append(f"stays under {lim} at any larger rank count by its law ({limit['law']})")
    if limit["upper_bound_ranks"] and limit["upper_bound_ranks"] != limit["ranks"]:
        parts.append(f"its 95% interval's high end exceeds it from {num(limit['upper_bound_ranks'])} ranks")
    elif not limit["upper_bound_ranks"] and limit["ranks"] is None:
        parts.append("its 95% interval's high end too")
    return f"{what} " + "; ".join(parts)


def _path_lines(paths: dict, targets: List[int]) -> List[str]:
    if not paths["types"]:
        return ["", f"  call paths: {paths['absent']}"] if paths.get("absent") else []
    out = ["", f"  call paths: the {len(paths['types'])} largest stack types at the peak of the "
               f"{paths['at_ranks']}-rank run (the most one rank held), each fitted"
               + ("" if paths["exact"] else "; lower bounds")]
    counts = sorted({m["ranks"] for t in paths["types"] for m in t["measured"]} |
                    {p for t in paths["types"] for p in t["not_among_largest"]})
    header = ["#", "law", "call path"] + [_ranks(p) for p in counts] + [_ranks(t) for t in targets]
    rows = []
    for i, t in enumerate(paths["types"], 1):
        got = {m["ranks"]: m["bytes_max"] for m in t["measured"]}
        law = t["law"]
        preds = {p["ranks"]: p for p in law.get("predictions", [])}
        rows.append([f"{i}.", _law_cell(law), f"{path_label(t['frames'])} ({t['library']}, {t['region']})"]
                    + [size(got[p]) if p in got else "?" for p in counts]
                    + [_prediction(preds.get(t)) for t in targets])
    out.append(table(header, rows, left=3))
    if any(t["not_among_largest"] for t in paths["types"]):
        out.append("  ?: not among that run's largest types at the ranks' peaks (unknown, not 0)")
    return out


def _side_lines(side: dict) -> List[str]:
    by = side["by"]
    out = ["", "MPI memory per rank, side by side (the largest rank's)"
           + (f", {by['variable']}={by['value']}" if by else "")]
    header = ["ranks"] + [f"{lib}: {m['title']}" for lib in side["libraries"] for m in side["metrics"]]
    rows = []
    for row in side["rows"]:
        cells = [str(row["ranks"])]
        for lib in row["libraries"]:
            cells += [size(lib[m["key"]]) for m in side["metrics"]]
        rows.append(cells)
    out.append(table(header, rows, left=1))
    return out


CSV_HEADER = ("section", "mpi_library", "by_value", "component", "figure", "ranks", "kind",
              "value", "low", "high", "law")


def render_csv(doc: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)

    def value_of(item):
        return (item.get("by") or {}).get("value", "")

    for c in doc["components"]:
        for fld in c["fields"]:
            law = c["laws"][fld]
            for m in c["measured"]:
                if m.get(fld) is not None:
                    w.writerow(["component", c["mpi_library"], value_of(c), c["component"], fld,
                                m["ranks"], "measured", m[fld], "", "", ""])
            _law_rows(w, "component", c["mpi_library"], value_of(c), c["component"], fld, law)
    for group in doc["paths"]:
        for t in group["types"]:
            label = path_label(t["frames"])
            for m in t["measured"]:
                w.writerow(["path", group["mpi_library"], value_of(group), label, "bytes_max",
                            m["ranks"], "measured", m["bytes_max"], "", "", ""])
            _law_rows(w, "path", group["mpi_library"], value_of(group), label, "bytes_max", t["law"])
    if doc["limit"]:
        for lim in doc["limits"]:
            if lim.get("field"):
                w.writerow(["limit", lim["mpi_library"], value_of(lim), "total", lim["field"],
                            lim["ranks"] or "", "exceeds", doc["limit"]["bytes"], "",
                            lim["upper_bound_ranks"] or "", lim["law"]])
    for side in doc["side_by_side"]:
        for row in side["rows"]:
            for lib in row["libraries"]:
                for m in side["metrics"]:
                    v = lib[m["key"]]
                    w.writerow(["side-by-side", lib["mpi_library"], value_of(side), "MPI",
                                m["key"], row["ranks"], "measured", "" if v is None else v,
                                "", "", ""])
    return buf.getvalue()


def _law_rows(w, section, library, value, component, fld, law) -> None:
    if law["status"] != "chosen":
        return
    for p in law["predictions"]:
        w.writerow([section, library, value, component, fld, p["ranks"], "predicted", p["value"],
                    "" if p["low"] is None else p["low"], "" if p["high"] is None else p["high"],
                    law["law"]])
    for r in law["rivals"]:
        for p in r["predictions"]:
            w.writerow([section, library, value, component, fld, p["ranks"], "rival", p["value"],
                        "" if p["low"] is None else p["low"], "" if p["high"] is None else p["high"],
                        r["law"]])
