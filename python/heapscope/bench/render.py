"""Benchmark results as text tables (terminal), Markdown (BENCHMARKS.md), JSON and CSV.

Text and Markdown show, per command, each configuration's mean with its 95%
bootstrap interval, the median, and the ratio of means to the baseline with its
interval; then an overview of wall-time, CPU-time and max-RSS ratios (commands x configurations).
JSON holds everything, including every run. CSV has one row per counted run.
"""
import csv
import io
import math
from typing import Dict, List, Optional

from heapscope.bench.results import METRIC_TITLES, WorkloadResult

SHOWN = ["wall", "cpu", "maxrss", "minflt"]   # metrics in the tables (JSON/CSV have all)


def _num(value: float, key: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if key == "maxrss":
        return f"{value:.1f}"
    if key == "minflt":
        return f"{value:,.0f}"
    return f"{value:.3f}" if value < 100 else f"{value:.1f}"


def _ci(low: float, high: float, key: str) -> str:
    return f"[{_num(low, key)}, {_num(high, key)}]"


def _ratio(r) -> str:
    if r is None or math.isnan(r.value):
        return "n/a"
    return f"{r.value:.2f} [{r.ci[0]:.2f}, {r.ci[1]:.2f}]"


def _rows(result: WorkloadResult):
    """Header and rows of one command's table (plain strings)."""
    base = result.baseline
    header = ["config", "n", "wall s mean [95% CI]", "median", f"x {base}"]
    for key in SHOWN[1:]:
        header += [f"{METRIC_TITLES[key]} mean", f"x {base}"]
    rows = []
    for c in result.configs:
        if not c.runs:
            reason = "failed: " + c.failure.failure_text().splitlines()[0] if c.failure else "no runs"
            rows.append([c.name, "0", reason] + [""] * (len(header) - 3))
            continue
        w = c.summaries["wall"]
        row = [c.name, str(w.n), f"{_num(w.mean, 'wall')} {_ci(*w.mean_ci, 'wall')}",
               _num(w.median, "wall"), _ratio(c.ratios.get("wall"))]
        for key in SHOWN[1:]:
            s = c.summaries[key]
            row += [_num(s.mean, key), _ratio(c.ratios.get(key))]
        rows.append(row)
    return header, rows


def _align(header: List[str], rows: List[List[str]], indent: str = "  ") -> str:
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = []
    for r in [header] + rows:
        cells = [r[0].ljust(widths[0])] + [r[i].rjust(widths[i]) for i in range(1, len(r))]
        lines.append(indent + "  ".join(cells).rstrip())
    return "\n".join(lines)


def _overview(results: List[WorkloadResult], key: str):
    configs: List[str] = []
    for r in results:
        for c in r.configs:
            if c.name not in configs:
                configs.append(c.name)
    rows = []
    for r in results:
        row = [r.name]
        for name in configs:
            c = r.config(name)
            row.append(_ratio(c.ratios.get(key)) if c and c.runs else "-")
        rows.append(row)
    return ["command"] + configs, rows


def _command_line(result: WorkloadResult) -> str:
    """The command, bundled programs named without their install directory."""
    from heapscope.native import native_dir
    bindir = str(native_dir() / "bin") + "/"
    return " ".join(a[len(bindir):] if a.startswith(bindir) else a for a in result.command)


def text(results: List[WorkloadResult], runs: int, warmup: int) -> str:
    out = []
    for r in results:
        check = f"checksum {r.checksum}" if r.checksum else "no checksum printed"
        if r.checksum_error:
            check = "CHECKSUM MISMATCH"
        out.append(f"{r.name}: {_command_line(r)}  ({check})")
        header, rows = _rows(r)
        out.append(_align(header, rows))
        out.append("")
    if results:
        base = results[0].baseline
        for key in ("wall", "cpu", "maxrss"):
            header, rows = _overview(results, key)
            out.append(f"{METRIC_TITLES[key]}: ratio of means to {base} [95% bootstrap CI]")
            out.append(_align(header, rows))
            out.append("")
        out.append(f"{runs} counted runs per configuration after {warmup} warm-up round(s), "
                   f"interleaved; intervals: percentile bootstrap, 1000 resamples.")
    return "\n".join(out).rstrip() + "\n"


def _md_table(header: List[str], rows: List[List[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(results: List[WorkloadResult], machine: Dict[str, object], command: str,
             runs: int, warmup: int, legend: Optional[Dict[str, str]] = None) -> str:
    from heapscope.bench.machine import one_line
    base = results[0].baseline if results else "glibc"
    versions = ", ".join(f"{k} {v}" for k, v in machine.get("versions", {}).items())
    out = [f"Machine: {one_line(machine)}.", f"Libraries: {versions}.", "",
           f"Regenerate with `{command}`. {runs} counted runs per configuration after "
           f"{warmup} warm-up round(s), interleaved (A B C A B C ...); mean and median with "
           f"95% percentile-bootstrap intervals (1000 resamples); ratios are of means, "
           f"to {base}.", ""]
    if legend:
        out += [f"- `{name}`: {what}" for name, what in legend.items() if what] + [""]
    for key in ("wall", "cpu", "maxrss"):
        header, rows = _overview(results, key)
        out += [f"**{METRIC_TITLES[key]}, ratio to {base}**", "", _md_table(header, rows), ""]
    for r in results:
        out += [f"#### {r.name}", "", f"`{_command_line(r)}`" +
                (f" — checksum `{r.checksum}`" if r.checksum else ""), ""]
        if r.checksum_error:
            out += [f"**{r.checksum_error}**", ""]
        header, rows = _rows(r)
        out += [_md_table(header, rows), ""]
    return "\n".join(out).rstrip() + "\n"


def _summary_dict(s) -> Dict[str, object]:
    return {"n": s.n, "mean": s.mean, "mean_ci": list(s.mean_ci), "median": s.median,
            "median_ci": list(s.median_ci), "stdev": s.stdev, "min": s.minimum, "max": s.maximum}


def _run_dict(m) -> Dict[str, object]:
    return {"wall": m.wall, "user": m.user, "sys": m.sys, "maxrss_kib": m.maxrss_kib,
            "minflt": m.minflt, "majflt": m.majflt, "exit_code": m.exit_code,
            "timed_out": m.timed_out, "checksum": m.checksum}


def to_json(results: List[WorkloadResult], machine: Dict[str, object],
            settings: Dict[str, object], missing: Dict[str, str]) -> Dict[str, object]:
    doc = {"heapscope_bench": 1, "machine": machine, "settings": settings,
           "missing": missing, "commands": []}
    for r in results:
        entry = {"name": r.name, "command": r.command, "baseline": r.baseline,
                 "checksum": r.checksum, "checksum_error": r.checksum_error, "configs": []}
        for c in r.configs:
            entry["configs"].append({
                "name": c.name,
                "runs": [_run_dict(m) for m in c.runs],
                "failure": None if c.failure is None else dict(
                    _run_dict(c.failure), stderr_tail=c.failure.stderr_tail,
                    message=c.failure.failure_text()),
                "stats": {k: _summary_dict(s) for k, s in c.summaries.items()},
                "ratios": {k: {"value": None if math.isnan(v.value) else v.value,
                               "ci": None if math.isnan(v.value) else list(v.ci)}
                           for k, v in c.ratios.items()},
            })
        doc["commands"].append(entry)
    return doc


CSV_FIELDS = ["command", "config", "run", "wall_s", "user_s", "sys_s", "maxrss_kib",
              "minflt", "majflt", "exit_code", "checksum"]


def to_csv(results: List[WorkloadResult]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for r in results:
        for c in r.configs:
            for i, m in enumerate(c.runs):
                writer.writerow([r.name, c.name, i + 1, f"{m.wall:.6f}", f"{m.user:.6f}",
                                 f"{m.sys:.6f}", m.maxrss_kib, m.minflt, m.majflt,
                                 m.exit_code, m.checksum or ""])
    return buf.getvalue()
