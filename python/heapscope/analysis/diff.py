"""Compare two sets of profiles (A = before, B = after): step four of the method.

  size_changes     per (region, size): counts and bytes before and after
  totals           all selected allocations before and after
  migrations       per region, the sizes that fell and the sizes that rose (fixing
                   12-byte blocks can create 24-byte ones)
  stack_changes    per stack trace type, matched by symbolized frames (function, file,
                   line; never addresses), so two builds of a program compare
  path_migrations  one call path whose allocations changed size between A and B
  regression       did the total count (or bytes) rise by more than a percentage
  compare          all of the above for two sets of profiles (`heapscope diff`)
  compare_runs     the same for several runs per side: each row's figures are the mean
                   of the runs with their range (Runs), and a change whose ranges
                   overlap is "within run-to-run variation"
  document         a comparison as plain data: the `--format json` layout
                   (docs/analysis-formats.md); render/diff_text.py and
                   render/csv_tables.py lay it out as text and CSV
"""
from dataclasses import dataclass, replace
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from heapscope.analysis import sampling
from heapscope.analysis.loading import region_paths, weighted_stacks
from heapscope.analysis.selection import SizeSet, check_region, region_matches
from heapscope.analysis.stacks import WeightedStack, identity
from heapscope.errors import HeapscopeError
from heapscope.profile.model import Profile
from heapscope.symbolize import Symbolizer

METRICS = ("count", "bytes")
DIFF_FORMAT = "heapscope-diff"
DIFF_VERSION = 1


VARIATION = "within run-to-run variation"


@dataclass(frozen=True)
class Runs:
    """A row's allocations in each run of A and of B (several recordings of the same
    program and input per side): the row's count_a and count_b are their means."""
    a: Tuple[int, ...]
    b: Tuple[int, ...]

    @property
    def several(self) -> bool:
        return len(self.a) > 1 or len(self.b) > 1

    @property
    def overlap(self) -> bool:
        """The two sides' ranges meet: the runs of A span some of B's, or the reverse."""
        return min(self.a) <= max(self.b) and min(self.b) <= max(self.a)


@dataclass(frozen=True)
class Change:
    """Before/after figures of one row (a size in a region, a stack type, a total)."""
    count_a: int
    count_b: int
    bytes_a: int
    bytes_b: int

    @property
    def delta(self) -> int:
        return self.count_b - self.count_a

    @property
    def bytes_delta(self) -> int:
        return self.bytes_b - self.bytes_a

    @property
    def ratio(self) -> Optional[float]:
        """B / A allocations; None when A had none."""
        return self.count_b / self.count_a if self.count_a else None

    @property
    def status(self) -> str:
        runs = getattr(self, "runs", None)
        if runs is not None and runs.several and self.delta and runs.overlap:
            return VARIATION
        if self.count_a == 0 and self.count_b:
            return "new"
        if self.count_b == 0 and self.count_a:
            return "gone"
        if self.delta > 0:
            return "more"
        if self.delta < 0:
            return "fewer"
        return "same"

    def percent(self, metric: str = "count") -> Optional[float]:
        """Relative change in percent; None when A is zero (and B is not)."""
        a, b = (self.count_a, self.count_b) if metric == "count" else (self.bytes_a, self.bytes_b)
        if a == 0:
            return 0.0 if b == 0 else None
        return 100.0 * (b - a) / a


@dataclass(frozen=True)
class TotalChange(Change):
    runs: Optional[Runs] = None


@dataclass(frozen=True)
class SizeChange(Change):
    region: str = ""
    size: int = 0
    runs: Optional[Runs] = None


@dataclass(frozen=True)
class StackChange(Change):
    region: str = ""
    size: int = 0
    stack: Optional[WeightedStack] = None   # frames to print (from B when present, else A)
    noise: bool = False    # sampled stacks: the two estimates' 95% intervals overlap
    runs: Optional[Runs] = None

    @property
    def status(self) -> str:
        status = Change.status.fget(self)
        if status != VARIATION and self.noise and self.delta:
            return "within sampling noise"
        return status

    @property
    def unchanged(self) -> bool:
        """No change beyond what sampling or the runs' spread explain."""
        return self.status in ("same", "within sampling noise", VARIATION)


@dataclass(frozen=True)
class Migration:
    region: str
    fell: Tuple[SizeChange, ...]   # biggest drop first
    rose: Tuple[SizeChange, ...]   # biggest rise first


@dataclass(frozen=True)
class PathMigration:
    region: str
    stack: WeightedStack                     # the path (frames from B)
    before: Tuple[Tuple[int, int], ...]      # (size, count) in A
    after: Tuple[Tuple[int, int], ...]       # (size, count) in B


def size_table(profiles: Sequence[Profile], sizes: SizeSet, region: Optional[str]) -> Dict[Tuple[str, int], int]:
    table: Dict[Tuple[str, int], int] = {}
    for p in profiles:
        for (r, size), count in p.size_counts.items():
            if size in sizes and region_matches(r, region):
                table[(r, size)] = table.get((r, size), 0) + count
    return table


def size_changes(a: Dict[Tuple[str, int], int], b: Dict[Tuple[str, int], int]) -> List[SizeChange]:
    """Every (region, size) of A or B; the biggest change first."""
    rows = []
    for region, size in set(a) | set(b):
        ca, cb = a.get((region, size), 0), b.get((region, size), 0)
        rows.append(SizeChange(ca, cb, ca * size, cb * size, region, size))
    rows.sort(key=lambda r: (-abs(r.delta), -abs(r.bytes_delta), r.region, r.size))
    return rows


def totals(rows: Iterable[Change]) -> TotalChange:
    ca = cb = ba = bb = 0
    for r in rows:
        ca += r.count_a
        cb += r.count_b
        ba += r.bytes_a
        bb += r.bytes_b
    return TotalChange(ca, cb, ba, bb)


def migrations(rows: Sequence[SizeChange]) -> List[Migration]:
    """Regions where some sizes fell and others rose; the region with most movement first."""
    by_region: Dict[str, List[SizeChange]] = {}
    for r in rows:
        by_region.setdefault(r.region, []).append(r)
    out = []
    for region, rs in by_region.items():
        fell = tuple(sorted((r for r in rs if r.delta < 0), key=lambda r: (r.delta, r.size)))
        rose = tuple(sorted((r for r in rs if r.delta > 0), key=lambda r: (-r.delta, r.size)))
        if fell and rose:
            out.append(Migration(region, fell, rose))
    out.sort(key=lambda m: (-min(-m.fell[0].delta, m.rose[0].delta), m.region))
    return out


def _interval(count: int, samples: int, region: str, size: int, mean: int,
              cells: Optional[tuple]) -> Tuple[int, int]:
    """A side's 95% interval of a type's allocations: its own count when that side's
    stacks are exact, else from its samples among its size's (analysis/sampling.py;
    a type the side never sampled runs from 0)."""
    if not mean or cells is None:
        return count, count
    counted, sampled = cells
    T, K = counted.get((region, size), 0), sampled.get((region, size), 0)
    if not T:
        return count, count
    return sampling.hypergeometric_interval(samples, K, T, seen=samples > 0)


def stack_changes(a: Sequence[WeightedStack], b: Sequence[WeightedStack], mean_a: int = 0,
                  mean_b: int = 0, cells_a: Optional[tuple] = None,
                  cells_b: Optional[tuple] = None) -> List[StackChange]:
    """Stack types of A and B matched by region, size and symbolized frames (merge each
    side first). The biggest change first. With sampled stacks on a side (mean_a,
    mean_b; cells_*: sampling.cell_totals of the side), a change whose two intervals
    overlap is noise."""
    index: Dict[tuple, List] = {}
    for side, stacks in ((0, a), (1, b)):
        for s in stacks:
            acc = index.setdefault(s.key, [0, 0, 0, 0, s, 0, 0])
            acc[side] += s.count
            acc[2 + side] += s.bytes
            acc[5 + side] += s.samples
            if side == 1:
                acc[4] = s
    rows = []
    for ca, cb, ba, bb, s, ka, kb in index.values():
        noise = False
        if mean_a or mean_b:
            lo_a, hi_a = _interval(ca, ka, s.region, s.size, mean_a, cells_a)
            lo_b, hi_b = _interval(cb, kb, s.region, s.size, mean_b, cells_b)
            noise = lo_a <= hi_b and lo_b <= hi_a
        rows.append(StackChange(ca, cb, ba, bb, s.region, s.size, s, noise))
    rows.sort(key=lambda r: (-abs(r.delta), r.region, r.size, r.stack.key))
    return rows


def path_migrations(a: Sequence[WeightedStack], b: Sequence[WeightedStack]) -> List[PathMigration]:
    """Call paths (same region and frames) whose allocation sizes differ between A and B."""
    paths: Dict[tuple, List] = {}
    for side, stacks in ((0, a), (1, b)):
        for s in stacks:
            key = (s.region, tuple(identity(f) for f in s.frames))
            acc = paths.setdefault(key, [{}, {}, s])
            acc[side][s.size] = acc[side].get(s.size, 0) + s.count
            if side == 1:
                acc[2] = s
    out = []
    for (region, _), (before, after, s) in paths.items():
        if before and after and set(before) != set(after):
            out.append(PathMigration(region, s, tuple(sorted(before.items())), tuple(sorted(after.items()))))
    out.sort(key=lambda m: (-sum(c for _, c in m.after), m.region))
    return out


def regression(total: Change, percent: float, metric: str = "count",
               runs: Optional[Tuple[Sequence[int], Sequence[int]]] = None) -> Optional[str]:
    """A one-line reason when the metric rose by more than `percent`, else None. With
    several runs on a side (runs: the metric per run of A and of B), B's lowest run is
    compared with A's highest: a rise within run-to-run variation fails nothing."""
    unit = "allocations" if metric == "count" else "bytes"
    if runs is not None and (len(runs[0]) > 1 or len(runs[1]) > 1):
        high_a, low_b = max(runs[0]), min(runs[1])
        spread = (f"A's {len(runs[0])} run{'s' if len(runs[0]) != 1 else ''} {min(runs[0]):,}.."
                  f"{high_a:,}, B's {len(runs[1])} {low_b:,}..{max(runs[1]):,}")
        if high_a == 0:
            return f"{unit} rose from 0 in every run of A ({spread})" if low_b else None
        change = 100.0 * (low_b - high_a) / high_a
        if change > percent:
            return (f"{unit} rose beyond run-to-run variation: B's lowest run is {change:.2f}% "
                    f"above A's highest ({spread}), more than the {percent:g}% allowed")
        return None
    a, b = (total.count_a, total.count_b) if metric == "count" else (total.bytes_a, total.bytes_b)
    change = total.percent(metric)
    if change is None:
        return f"{unit} rose from 0 to {b:,}"
    if change > percent:
        return f"{unit} rose by {change:.2f}% ({a:,} -> {b:,}), more than the {percent:g}% allowed"
    return None


def compare(side_a: Sequence[Profile], side_b: Sequence[Profile], sizes: SizeSet,
            region: Optional[str], stacks: bool = False,
            symbolizer: Optional[Symbolizer] = None) -> dict:
    """A against B: processes (how many on each side), sizes (SizeChange rows), total,
    migrations; with `stacks` also stacks (StackChange rows) and path_migrations.
    `warnings` holds the one-line warnings for the user (a side without stack types)."""
    return compare_runs([side_a], [side_b], sizes, region, stacks, symbolizer)


def _mean(values: Sequence[int]) -> int:
    return round(sum(values) / len(values)) if values else 0


def _mean_table(tables: Sequence[Dict[Tuple[str, int], int]]) -> Dict[Tuple[str, int], int]:
    keys = set().union(*tables) if tables else set()
    return {k: _mean([t.get(k, 0) for t in tables]) for k in keys}


def _mean_stacks(runs: Sequence[Sequence[WeightedStack]]) -> List[WeightedStack]:
    """One side's stacks with each type's count the mean over its runs (0 where a run
    lacks it), samples summed."""
    acc: Dict[tuple, List] = {}
    for stacks in runs:
        for s in stacks:
            a = acc.setdefault(s.key, [s, 0, 0])
            a[0], a[1], a[2] = s, a[1] + s.count, a[2] + s.samples
    out = [replace(s, count=round(c / len(runs)), bytes=round(c / len(runs)) * s.size, samples=k)
           for s, c, k in acc.values()]
    out.sort(key=lambda s: (-s.count, s.key))
    return out


def compare_runs(runs_a: Sequence[Sequence[Profile]], runs_b: Sequence[Sequence[Profile]],
                 sizes: SizeSet, region: Optional[str], stacks: bool = False,
                 symbolizer: Optional[Symbolizer] = None) -> dict:
    """compare() over several runs per side (each run: its processes' profiles): every
    row's before and after are the means of the runs, with each run's figure in its
    Runs; `total_runs` holds (count, bytes) per run of A and of B. One run per side is
    compare() itself."""
    every_a = [p for run in runs_a for p in run]
    every_b = [p for run in runs_b for p in run]
    check_region(region_paths(every_a) + region_paths(every_b), region)
    tables_a = [size_table(run, sizes, region) for run in runs_a]
    tables_b = [size_table(run, sizes, region) for run in runs_b]
    rows = [replace(r, runs=Runs(tuple(t.get((r.region, r.size), 0) for t in tables_a),
                                 tuple(t.get((r.region, r.size), 0) for t in tables_b)))
            for r in size_changes(_mean_table(tables_a), _mean_table(tables_b))]

    def run_totals(tables):
        return [(sum(t.values()), sum(n * size for (_, size), n in t.items())) for t in tables]
    per_run = (run_totals(tables_a), run_totals(tables_b))
    total = replace(totals(rows), runs=Runs(tuple(c for c, _ in per_run[0]),
                                            tuple(c for c, _ in per_run[1])))
    result = dict(processes=(len(runs_a[0]), len(runs_b[0])), sizes=rows, total=total,
                  migrations=migrations([r for r in rows if r.status != VARIATION]), warnings=[],
                  runs=(len(runs_a), len(runs_b)), total_runs=per_run)
    if stacks:
        sym = symbolizer or Symbolizer()
        side_stacks = []
        for runs in (runs_a, runs_b):
            side_stacks.append([weighted_stacks(run, sizes, region, symbolizer=sym, check=False)
                                for run in runs])
        stacks_a, stacks_b = (_mean_stacks(side) for side in side_stacks)
        if not stacks_a and not stacks_b:
            raise HeapscopeError("--stacks: neither A nor B holds stack trace types of the selection "
                                 "(record with `heapscope record --sizes SPEC`)")
        result["warnings"] = [f"{side} holds no stack trace types of the selection"
                              for side, held in (("A", stacks_a), ("B", stacks_b)) if not held]
        single = len(runs_a) == 1 and len(runs_b) == 1
        mean_a, mean_b = (sampling.one_mean(every_a), sampling.one_mean(every_b)) if single else (0, 0)
        changes = stack_changes(stacks_a, stacks_b, mean_a, mean_b,
                                sampling.cell_totals(every_a) if mean_a else None,
                                sampling.cell_totals(every_b) if mean_b else None)
        per_key = [[{s.key: s.count for s in run} for run in side] for side in side_stacks]
        result["stacks"] = [replace(c, runs=Runs(tuple(run.get(c.stack.key, 0) for run in per_key[0]),
                                                 tuple(run.get(c.stack.key, 0) for run in per_key[1])))
                            for c in changes]
        result["path_migrations"] = path_migrations(stacks_a, stacks_b)
    return result


def change_row(kind: str, c: Change, region: str, size, stack: str = "") -> dict:
    """One row of the JSON and CSV forms: counts, bytes, delta, ratio and status; with
    several runs on a side, each side's runs and their lowest and highest count."""
    ratio = c.ratio
    row = dict(kind=kind, region=region, size=size, count_a=c.count_a, count_b=c.count_b,
               delta=c.delta, ratio=None if ratio is None else round(ratio, 6), bytes_a=c.bytes_a,
               bytes_b=c.bytes_b, bytes_delta=c.bytes_delta, status=c.status, stack=stack)
    runs = getattr(c, "runs", None)
    if runs is not None and runs.several:
        row.update(runs_a=len(runs.a), runs_b=len(runs.b), count_a_min=min(runs.a),
                   count_a_max=max(runs.a), count_b_min=min(runs.b), count_b_max=max(runs.b))
    return row


def frames_json(stack: WeightedStack) -> List[dict]:
    return [dict(function=f.function, file=f.file or None, line=f.line or None, module=f.module,
                 inlined=f.inlined) for f in stack.frames]


def document(result: dict, a: str, b: str, region: Optional[str], size: Optional[str],
             metric: str, regression_reason: Optional[str]) -> dict:
    """The comparison as plain data; `stacks` and `path_migrations` only when compared."""
    t = result["total"]
    doc = dict(format=DIFF_FORMAT, version=DIFF_VERSION,
               a=a, b=b, region=region, size=size, metric=metric,
               total=change_row("total", t, None, None),   # every region and size
               percent=dict(count=t.percent("count"), bytes=t.percent("bytes")),
               sizes=[change_row("size", r, r.region, r.size) for r in result["sizes"]],
               migrations=[dict(region=m.region, fell=[dict(size=r.size, delta=r.delta) for r in m.fell],
                                rose=[dict(size=r.size, delta=r.delta) for r in m.rose])
                           for m in result["migrations"]],
               regression=regression_reason,
               runs=dict(zip("ab", result.get("runs", (1, 1)))))
    if "stacks" in result:
        doc["stacks"] = [dict(change_row("stack", s, s.region, s.size), frames=frames_json(s.stack))
                         for s in result["stacks"]]
        doc["path_migrations"] = [dict(region=m.region, before=[list(x) for x in m.before],
                                       after=[list(x) for x in m.after], frames=frames_json(m.stack))
                                  for m in result["path_migrations"]]
    return doc
