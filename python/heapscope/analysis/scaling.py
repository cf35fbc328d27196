"""`heapscope scaling DIR DIR ...`: per-rank memory at several rank counts, each figure's
law of the rank count p, predictions at larger rank counts and where a memory limit is
crossed, as plain data (docs/scaling.md; docs/report-formats.md, "scaling").

The recordings (analysis.scaling_runs.Run, one per directory) are grouped by MPI
library and, with --by VAR, by VAR's value; each group is fitted on its own
(analysis.scaling_fit). A per-rank figure is the largest rank's (the one that runs out
of memory first):
  total        heap peak, RSS peak, PSS peak
  application  heap peak of the blocks allocated outside MPI calls
  MPI          heap peak of the blocks allocated inside MPI calls; the calipers' non-heap
               RSS and PSS (docs/report-formats.md)
  library L    (--by-library) what the stack types of module L held at the ranks' heap
               peaks, per rank (the job file's largest types at each rank's peak, so a
               lower bound; record --track)
and per call path (record --track): the largest stack types at the peak of the largest
run, matched by region and call path at every rank count, each with its own law.
Two MPI libraries at the same rank counts: their MPI memory side by side.
"""
from typing import Dict, List, Optional, Sequence, Tuple

from heapscope.analysis.scaling_fit import LAWS, Choice, Fit, choose, first_above
from heapscope.analysis.scaling_runs import Run

SCALING_FORMAT = "heapscope-scaling"
SCALING_VERSION = 1
PATHS_SHOWN = 10
CURVE_POINTS = 40

# component -> ((job metric, JSON field, title), ...)
COMPONENTS = (
    ("total", (("heap_peak", "heap_peak_per_rank", "heap peak"),
               ("rss_peak", "rss_peak_per_rank", "RSS peak"),
               ("pss_peak", "pss_peak_per_rank", "PSS peak"))),
    ("application", (("heap_app_peak", "heap_peak_per_rank", "heap peak"),)),
    ("MPI", (("heap_mpi_peak", "heap_peak_per_rank", "heap peak"),
             ("mpi_rss", "nonheap_rss_per_rank", "non-heap RSS (calipers)"),
             ("mpi_pss", "nonheap_pss_per_rank", "non-heap PSS (calipers)"))),
)
LIBRARY_FIELD = ("heap_peak_per_rank", "held at the peaks by its largest types, mean per rank")
# the figure a memory limit is checked against, first measured one wins
LIMIT_METRICS = (("total", "rss_peak_per_rank"), ("total", "heap_peak_per_rank"))
SIDE_BY_SIDE = (("heap_mpi_peak", "MPI heap peak"), ("mpi_rss", "MPI non-heap RSS"),
                ("rss_peak", "RSS peak"))


def default_targets(runs: Sequence[Run]) -> List[int]:
    """Twice and four times the largest rank count measured."""
    top = max(r.ranks for r in runs)
    return [2 * top, 4 * top]


def build(runs: Sequence[Run], targets: Sequence[int], limit: Optional[int] = None,
          limit_source: str = "", by: Optional[str] = None, by_library: bool = False) -> dict:
    """runs: loaded and checked (scaling_runs.same_program); targets: the rank counts
    predicted; limit: bytes a rank may use (None: no limit checked)."""
    targets = sorted(set(int(t) for t in targets))
    groups = _groups(runs)
    components, paths, limits, notes = [], [], [], []
    for (library, value), members in groups.items():
        members = sorted(members, key=lambda r: (r.ranks, r.path))
        where = dict(mpi_library=library, by=dict(variable=by, value=value) if by else None)
        group_components = [_component(name, metrics, members, targets, where, limit)
                            for name, metrics in COMPONENTS]
        group_components = [c for c in group_components if c is not None]
        if by_library:
            group_components += _libraries(members, targets, where, limit, notes)
        components += group_components
        paths.append(dict(where, **_paths(members, targets)))
        limits.append(dict(where, **_limit(group_components, limit)))
    warnings = sorted({f"{r.path}: {w}" for r in runs for w in r.warnings})
    first = runs[0]
    return dict(
        format=SCALING_FORMAT, version=SCALING_VERSION,
        program=first.program, arguments=first.argv[1:], by=by,
        statistic="the largest rank's figure at each rank count",
        method=dict(laws=[dict(law=l.name, formula=l.formula, meaning=l.meaning) for l in LAWS],
                    choice="held-out checks (each rank count left out in turn)",
                    interval="95% least-squares prediction interval (Student's t)"),
        runs=[_run_doc(r) for r in sorted(runs, key=lambda r: (r.library_label, r.by_value or "",
                                                                  r.ranks, r.path))],
        targets=targets,
        limit=dict(bytes=limit, source=limit_source) if limit else None,
        components=components, paths=paths, limits=limits,
        side_by_side=_side_by_side(groups, by),
        warnings=warnings, notes=sorted(set(notes)))


def _groups(runs: Sequence[Run]) -> Dict[Tuple[str, Optional[str]], List[Run]]:
    out: Dict[Tuple[str, Optional[str]], List[Run]] = {}
    for r in sorted(runs, key=lambda r: (r.library_label, _value_key(r.by_value))):
        out.setdefault((r.library_label, r.by_value), []).append(r)
    return out


def _value_key(value: Optional[str]):
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, value or "")


def _run_doc(r: Run) -> dict:
    return dict(path=r.path, ranks=r.ranks, program=r.program, exe=r.exe, argv=r.argv,
                mpi_library=r.library.document() if r.library else None, by_value=r.by_value,
                sampled=r.sampled, ranks_tracked=r.ranks_tracked,
                peak_stacks=None if r.peak_types is not None else r.peak_absent)


# ---- one figure's law ----

def _predictions(f: Fit, targets: Sequence[int]) -> List[dict]:
    out = []
    for t in targets:
        iv = f.interval(t)
        out.append(dict(ranks=t, value=round(f.predict(t)),
                        low=round(iv[0]) if iv else None, high=round(iv[1]) if iv else None))
    return out


def _fit_doc(f: Fit, targets: Sequence[int]) -> dict:
    names = "abc"
    return dict(law=f.law.name, formula=f.law.formula, meaning=f.law.meaning,
                coefficients={names[i]: float(c) for i, c in enumerate(f.coef)},
                held_out_error=None if f.held_out is None else round(f.held_out),
                residual_sd=None if f.residual_sd is None else round(f.residual_sd),
                predictions=_predictions(f, targets))


def law_document(points: Sequence[Tuple[int, int]], targets: Sequence[int],
                 limit: Optional[int] = None) -> dict:
    """The law of one figure measured at (ranks, bytes) points: status "chosen" (law,
    coefficients, predictions with intervals, rivals that fit as well and predict
    differently), "too-few-points" (laws through the points, none chosen) or "no-points"."""
    ps = [p for p, _ in points]
    ys = [y for _, y in points]
    choice: Choice = choose(ps, ys, targets)
    doc = dict(status=choice.status, points=len(points), rank_counts=len(set(ps)),
               unchecked=choice.unchecked)
    if choice.status == "no-points":
        return doc
    if choice.status == "too-few-points":
        doc["through_points"] = [_fit_doc(f, targets) for f in choice.exact]
        doc["why"] = (f"{len(set(ps))} rank count{'s' if len(set(ps)) != 1 else ''}: a law of k "
                      f"coefficients needs k + 1 to be checked on one left out (3 for a growth "
                      f"law, 4 for the sums)")
        return doc
    f = choice.chosen
    doc.update(_fit_doc(f, targets))
    doc["rivals"] = [_fit_doc(r, targets) for r in choice.rivals]
    doc["curve"] = _curve(f, ps, targets)
    doc["alike"] = [r.law.name for r in choice.equal]
    if limit:
        doc.update(_limit_figures(f, points, limit))
    return doc


def _limit_figures(f: Fit, points: Sequence[Tuple[int, int]], limit: int) -> dict:
    """Against a per-rank limit: the rank counts measured above it; the fewest ranks from
    which the law is at or under it (when it is above at 1 rank: a share that shrinks with
    p); the first rank count past the largest measured where the law, and its interval's
    high end, exceed it."""
    start = max(p for p, _ in points)
    high = (lambda p: f.interval(p)[1]) if f.interval(start) else None
    fits_from = None
    if f.predict(1) > limit:
        fits_from = first_above(lambda p: limit - f.predict(p) + 1, 0, 1)
    return dict(measured_above=sorted({p for p, y in points if y > limit}),
                fits_from=fits_from,
                exceeds_limit_at=first_above(f.predict, limit, start + 1),
                may_exceed_limit_at=first_above(high, limit, start + 1) if high else None)


def _curve(f: Fit, ps: Sequence[int], targets: Sequence[int]) -> List[dict]:
    """The law and its interval on a grid from the fewest ranks measured to the most
    predicted (CURVE_POINTS rank counts evenly spaced in log p, the measured and predicted
    ones among them): what the HTML page draws."""
    lo, hi = min(ps), max(list(ps) + list(targets))
    grid = {int(round(lo * (hi / lo) ** (i / (CURVE_POINTS - 1)))) for i in range(CURVE_POINTS)}
    out = []
    for p in sorted(grid | set(ps) | set(targets)):
        iv = f.interval(p)
        out.append(dict(ranks=p, value=round(f.predict(p)), low=round(iv[0]) if iv else None,
                        high=round(iv[1]) if iv else None))
    return out


def _series(runs: Sequence[Run], metric: str) -> List[Tuple[int, int]]:
    return [(r.ranks, r.stats[metric]["max"]) for r in runs
            if r.stats.get(metric) is not None]


def _component(name: str, metrics, runs: Sequence[Run], targets: Sequence[int], where: dict,
               limit: Optional[int]) -> Optional[dict]:
    laws, measured = {}, {}
    sampled = []
    for metric, fld, title in metrics:
        points = _series(runs, metric)
        if not points:
            continue
        laws[fld] = dict(law_document(points, targets, limit), metric=metric, title=title)
        for r in runs:
            s = r.stats.get(metric)
            if s is not None:
                row = measured.setdefault(r.path, dict(ranks=r.ranks, path=r.path))
                row[fld] = s["max"]
                row[fld + "_rank"] = s["max_rank"]
        if any(metric in r.sampled for r in runs):
            sampled.append(fld)
    if not laws:
        return None
    return dict(where, component=name, fields=list(laws), sampled=sampled,
                measured=sorted(measured.values(), key=lambda m: (m["ranks"], m["path"])),
                laws=laws, predictions=_merge_predictions(laws, targets))


def _merge_predictions(laws: Dict[str, dict], targets: Sequence[int]) -> List[dict]:
    """Per target: ranks and, per field, its value with _low/_high (null without a law)."""
    out = []
    for i, t in enumerate(targets):
        row = dict(ranks=t)
        for fld, doc in laws.items():
            pred = doc["predictions"][i] if doc.get("predictions") else None
            row[fld] = pred["value"] if pred else None
            row[fld + "_low"] = pred["low"] if pred else None
            row[fld + "_high"] = pred["high"] if pred else None
        out.append(row)
    return out


# ---- per library, per call path ----

def _libraries(runs: Sequence[Run], targets: Sequence[int], where: dict, limit: Optional[int],
               notes: List[str]) -> List[dict]:
    """Per module that asked for the blocks, per rank: what its stack types among each
    rank's largest held at the rank's peak, summed over the ranks, over the ranks tracked."""
    tracked = [r for r in runs if r.peak_types is not None and r.ranks_tracked]
    if not tracked:
        notes.append("--by-library: no recording holds stack types at the ranks' peaks "
                     "(record with --track)")
        return []
    per_lib: Dict[str, Dict[str, int]] = {}
    for r in tracked:
        for t in r.peak_types:
            per_lib.setdefault(t.library, {}).setdefault(r.path, 0)
            per_lib[t.library][r.path] += t.bytes
    out = []
    fld, title = LIBRARY_FIELD
    order = sorted(per_lib, key=lambda lib: -max(per_lib[lib].values()))
    for lib in order:
        points = [(r.ranks, round(per_lib[lib].get(r.path, 0) / r.ranks_tracked)) for r in tracked]
        law = dict(law_document(points, targets, limit), metric="peak_types", title=title)
        measured = [dict(ranks=r.ranks, path=r.path, **{fld: v}) for r, (_, v) in zip(tracked, points)]
        out.append(dict(where, component=f"library {lib}", library=lib, fields=[fld],
                        sampled=[], lower_bound=True, measured=measured, laws={fld: law},
                        predictions=_merge_predictions({fld: law}, targets)))
    return out


def _paths(runs: Sequence[Run], targets: Sequence[int]) -> dict:
    """The largest stack types at the peak of the group's largest tracked run, each fitted
    over the runs where it is among the ranks' largest types."""
    tracked = [r for r in runs if r.peak_types is not None]
    if not tracked:
        absent = next((r.peak_absent for r in runs if r.peak_absent), None)
        return dict(types=[], absent=absent)
    top = max(tracked, key=lambda r: (r.ranks, r.path))
    chosen = sorted(top.peak_types, key=lambda t: -t.bytes_max)[:PATHS_SHOWN]
    types = []
    for t in chosen:
        points, missing = [], []
        for r in tracked:
            match = [u for u in r.peak_types if u.key == t.key]
            if match:
                points.append((r.ranks, max(u.bytes_max for u in match)))
            else:
                missing.append(r.ranks)
        types.append(dict(region=t.region, frames=t.frames, library=t.library,
                          size_min=t.size_min, size_max=t.size_max,
                          measured=[dict(ranks=p, bytes_max=b) for p, b in points],
                          not_among_largest=sorted(missing),
                          law=law_document(points, targets)))
    return dict(types=types, at_ranks=top.ranks, ranks_tracked=top.ranks_tracked,
                exact=all(r.peak_exact for r in tracked), absent=None)


# ---- memory limit, libraries side by side ----

def _limit(components: List[dict], limit: Optional[int]) -> dict:
    """Where the chosen per-rank figure (RSS peak, else heap peak, of the total) first
    exceeds the limit, by its law and by its interval's high end."""
    if not limit:
        return dict(field=None)
    for name, fld in LIMIT_METRICS:
        comp = next((c for c in components if c["component"] == name and fld in c["laws"]), None)
        if comp is None:
            continue
        law = comp["laws"][fld]
        if law["status"] != "chosen":
            continue
        return dict(field=fld, law=law["law"], ranks=law.get("exceeds_limit_at"),
                    upper_bound_ranks=law.get("may_exceed_limit_at"),
                    measured_above=law.get("measured_above", []), fits_from=law.get("fits_from"))
    return dict(field=None)


def _side_by_side(groups: Dict[Tuple[str, Optional[str]], List[Run]], by: Optional[str]) -> List[dict]:
    """Per --by value measured under two MPI libraries or more: at each rank count, each
    library's per-rank MPI memory (largest rank)."""
    out = []
    values = sorted({v for _, v in groups}, key=_value_key)
    for value in values:
        libs = [(lib, runs) for (lib, v), runs in groups.items() if v == value]
        if len(libs) < 2:
            continue
        counts = sorted({r.ranks for _, runs in libs for r in runs})
        rows = []
        for p in counts:
            row = dict(ranks=p, libraries=[])
            for lib, runs in libs:
                run = next((r for r in runs if r.ranks == p), None)
                row["libraries"].append(dict(
                    mpi_library=lib,
                    **{m: (run.stats[m]["max"] if run and run.stats.get(m) else None)
                       for m, _ in SIDE_BY_SIDE}))
            rows.append(row)
        out.append(dict(by=dict(variable=by, value=value) if by else None,
                        libraries=[lib for lib, _ in libs],
                        metrics=[dict(key=m, title=t) for m, t in SIDE_BY_SIDE], rows=rows))
    return out
