"""The bench document (bench.results.document) as text tables (terminal), Markdown
(BENCHMARKS.md) and CSV.

Text and Markdown show, per command, each configuration's mean with its 95%
bootstrap interval, the median, and the ratio of means to the baseline with its
interval; then an overview of wall-time, CPU-time and max-RSS ratios (commands x
configurations). CSV has one row per counted run. (JSON is the document itself.)
"""
import csv
import io
import math
from typing import Dict, List, Optional

from heapscope.bench.results import METRIC_TITLES

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


def _ratio(r: Optional[dict]) -> str:
    if r is None or r["value"] is None:
        return "n/a"
    return f"{r['value']:.2f} [{r['ci'][0]:.2f}, {r['ci'][1]:.2f}]"


def _config(command: dict, name: str) -> Optional[dict]:
    return next((c for c in command["configs"] if c["name"] == name), None)


def _rows(command: dict):
    """Header and rows of one command's table (plain strings)."""
    base = command["baseline"]
    header = ["config", "n", "wall s mean [95% CI]", "median", f"x {base}"]
    for key in SHOWN[1:]:
        header += [f"{METRIC_TITLES[key]} mean", f"x {base}"]
    rows = []
    for c in command["configs"]:
        if not c["runs"]:
            reason = "failed: " + c["failure"]["message"].splitlines()[0] if c["failure"] else "no runs"
            rows.append([c["name"], "0", reason] + [""] * (len(header) - 3))
            continue
        w = c["stats"]["wall"]
        row = [c["name"], str(w["n"]), f"{_num(w['mean'], 'wall')} {_ci(*w['mean_ci'], 'wall')}",
               _num(w["median"], "wall"), _ratio(c["ratios"].get("wall"))]
        for key in SHOWN[1:]:
            row += [_num(c["stats"][key]["mean"], key), _ratio(c["ratios"].get(key))]
        rows.append(row)
    return header, rows


def _align(header: List[str], rows: List[List[str]], indent: str = "  ") -> str:
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = []
    for r in [header] + rows:
        cells = [r[0].ljust(widths[0])] + [r[i].rjust(widths[i]) for i in range(1, len(r))]
        lines.append(indent + "  ".join(cells).rstrip())
    return "\n".join(lines)


def _overview(commands: List[dict], key: str):
    configs: List[str] = []
    for r in commands:
        for c in r["configs"]:
            if c["name"] not in configs:
                configs.append(c["name"])
    rows = []
    for r in commands:
        row = [r["name"]]
        for name in configs:
            c = _config(r, name)
            row.append(_ratio(c["ratios"].get(key)) if c and c["runs"] else "-")
        rows.append(row)
    return ["command"] + configs, rows


def _command_line(command: dict, bindir: str) -> str:
    """The command, bundled programs (in `bindir`) named without their install directory."""
    return " ".join(a[len(bindir):] if bindir and a.startswith(bindir) else a
                    for a in command["command"])


def render(doc: dict, bindir: str = "") -> str:
    """bindir: where the bundled programs live ("/.../bin/"), left out of the commands shown."""
    results = doc["commands"]
    runs, warmup = doc["settings"]["runs"], doc["settings"]["warmup"]
    out = []
    for r in results:
        check = f"checksum {r['checksum']}" if r["checksum"] else "no checksum printed"
        if r["checksum_error"]:
            check = "CHECKSUM MISMATCH"
        out.append(f"{r['name']}: {_command_line(r, bindir)}  ({check})")
        header, rows = _rows(r)
        out.append(_align(header, rows))
        out.append("")
    if results:
        base = results[0]["baseline"]
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


def _machine_line(m: Dict[str, object]) -> str:
    return (f"{m['cpu']}, {m['cpus_usable']} of {m['cpus']} CPUs usable, "
            f"{m['memory_gib']} GiB, {m['os']}, Linux {m['kernel']}")


def markdown(doc: dict, command: str, legend: Optional[Dict[str, str]] = None,
             bindir: str = "") -> str:
    """command: the command line that regenerates the tables; legend: what each
    configuration is (--profilers)."""
    results, machine = doc["commands"], doc["machine"]
    runs, warmup = doc["settings"]["runs"], doc["settings"]["warmup"]
    base = results[0]["baseline"] if results else "glibc"
    versions = ", ".join(f"{k} {v}" for k, v in machine.get("versions", {}).items())
    out = [f"Machine: {_machine_line(machine)}.", f"Libraries: {versions}.", "",
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
        out += [f"#### {r['name']}", "", f"`{_command_line(r, bindir)}`" +
                (f" — checksum `{r['checksum']}`" if r["checksum"] else ""), ""]
        if r["checksum_error"]:
            out += [f"**{r['checksum_error']}**", ""]
        header, rows = _rows(r)
        out += [_md_table(header, rows), ""]
    return "\n".join(out).rstrip() + "\n"


CSV_FIELDS = ["command", "config", "run", "wall_s", "user_s", "sys_s", "maxrss_kib",
              "minflt", "majflt", "exit_code", "checksum"]


def render_csv(doc: dict) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for r in doc["commands"]:
        for c in r["configs"]:
            for i, m in enumerate(c["runs"]):
                writer.writerow([r["name"], c["name"], i + 1, f"{m['wall']:.6f}", f"{m['user']:.6f}",
                                 f"{m['sys']:.6f}", m["maxrss_kib"], m["minflt"], m["majflt"],
                                 m["exit_code"], m["checksum"] or ""])
    return buf.getvalue()
