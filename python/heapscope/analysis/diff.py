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
  document         a comparison as plain data: the `--format json` layout
                   (docs/analysis-formats.md); render/diff_text.py and
                   render/csv_tables.py lay it out as text and CSV
"""
from dataclasses import dataclass
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
class SizeChange(Change):
    region: str = ""
    size: int = 0


@dataclass(frozen=True)
class StackChange(Change):
    region: str = ""
    size: int = 0
    stack: Optional[WeightedStack] = None   # frames to print (from B when present, else A)
    noise: bool = False    # sampled stacks: the two estimates' 95% intervals overlap

    @property
    def status(self) -> str:
        return "within sampling noise" if self.noise and self.delta else Change.status.fget(self)


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


def totals(rows: Iterable[Change]) -> Change:
    ca = cb = ba = bb = 0
    for r in rows:
        ca += r.count_a
        cb += r.count_b
        ba += r.bytes_a
        bb += r.bytes_b
    return Change(ca, cb, ba, bb)


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


def regression(total: Change, percent: float, metric: str = "count") -> Optional[str]:
    """A one-line reason when the metric rose by more than `percent`, else None."""
    a, b = (total.count_a, total.count_b) if metric == "count" else (total.bytes_a, total.bytes_b)
    unit = "allocations" if metric == "count" else "bytes"
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
    check_region(region_paths(side_a) + region_paths(side_b), region)
    rows = size_changes(size_table(side_a, sizes, region), size_table(side_b, sizes, region))
    result = dict(processes=(len(side_a), len(side_b)), sizes=rows, total=totals(rows),
                  migrations=migrations(rows), warnings=[])
    if stacks:
        sym = symbolizer or Symbolizer()
        stacks_a = weighted_stacks(side_a, sizes, region, symbolizer=sym, check=False)
        stacks_b = weighted_stacks(side_b, sizes, region, symbolizer=sym, check=False)
        if not stacks_a and not stacks_b:
            raise HeapscopeError("--stacks: neither A nor B holds stack trace types of the selection "
                                 "(record with `heapscope record --sizes SPEC`)")
        result["warnings"] = [f"{side} holds no stack trace types of the selection"
                              for side, held in (("A", stacks_a), ("B", stacks_b)) if not held]
        mean_a, mean_b = sampling.one_mean(side_a), sampling.one_mean(side_b)
        result["stacks"] = stack_changes(stacks_a, stacks_b, mean_a, mean_b,
                                         sampling.cell_totals(side_a) if mean_a else None,
                                         sampling.cell_totals(side_b) if mean_b else None)
        result["path_migrations"] = path_migrations(stacks_a, stacks_b)
    return result


def change_row(kind: str, c: Change, region: str, size, stack: str = "") -> dict:
    """One row of the JSON and CSV forms: counts, bytes, delta, ratio and status."""
    ratio = c.ratio
    return dict(kind=kind, region=region, size=size, count_a=c.count_a, count_b=c.count_b,
                delta=c.delta, ratio=None if ratio is None else round(ratio, 6), bytes_a=c.bytes_a,
                bytes_b=c.bytes_b, bytes_delta=c.bytes_delta, status=c.status, stack=stack)


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
               regression=regression_reason)
    if "stacks" in result:
        doc["stacks"] = [dict(change_row("stack", s, s.region, s.size), frames=frames_json(s.stack))
                         for s in result["stacks"]]
        doc["path_migrations"] = [dict(region=m.region, before=[list(x) for x in m.before],
                                       after=[list(x) for x in m.after], frames=frames_json(m.stack))
                                  for m in result["path_migrations"]]
    return doc
