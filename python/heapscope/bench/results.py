"""From the runs of each configuration on one command to what the reports show:
per metric a Summary (mean, median, intervals) and a Ratio to the baseline, and the
checksum check (every run that printed a checksum must print the same one); then the
bench document (document()): every run and statistic as plain data, what `--format
json` writes and what render.bench_text and render.plots draw from.
"""
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from heapscope.bench import stats
from heapscope.bench.runner import Measurement, Outcome

# (key, column title, unit conversion from a Measurement)
METRICS = [
    ("wall", "wall s", lambda m: m.wall),
    ("cpu", "CPU s", lambda m: m.cpu),
    ("user", "user s", lambda m: m.user),
    ("sys", "sys s", lambda m: m.sys),
    ("maxrss", "max RSS MiB", lambda m: m.maxrss_kib / 1024.0),
    ("minflt", "minor faults", lambda m: float(m.minflt)),
]
METRIC_TITLES = {key: title for key, title, _ in METRICS}


@dataclass
class ConfigResult:
    name: str
    runs: List[Measurement]
    failure: Optional[Measurement] = None
    summaries: Dict[str, stats.Summary] = field(default_factory=dict)
    ratios: Dict[str, stats.Ratio] = field(default_factory=dict)


@dataclass
class WorkloadResult:
    name: str
    command: List[str]
    baseline: str
    configs: List[ConfigResult]
    checksum: Optional[str] = None          # the one all runs agreed on
    checksum_error: Optional[str] = None    # set when they did not

    def config(self, name: str) -> Optional[ConfigResult]:
        return next((c for c in self.configs if c.name == name), None)

    @property
    def errors(self) -> List[str]:
        errs = [f"{self.name}: under {c.name} the command {c.failure.failure_text()}"
                for c in self.configs if c.failure]
        if self.checksum_error:
            errs.append(f"{self.name}: {self.checksum_error}")
        return errs


def check_checksums(outcomes: Dict[str, Outcome]):
    """(checksum, error): the common checksum, or an error naming who printed what."""
    seen: Dict[str, List[Optional[str]]] = {}
    for name, outcome in outcomes.items():
        for m in outcome.warmups + outcome.runs:
            if m.ok:
                seen.setdefault(name, []).append(m.checksum)
    values = {c for sums in seen.values() for c in sums}
    if not values or values == {None}:
        return None, None
    if len(values) == 1:
        return values.pop(), None
    parts = []
    for name, sums in seen.items():
        distinct = sorted({s or "none" for s in sums})
        parts.append(f"{name} {'/'.join(distinct)}")
    return None, "checksum differs between runs: " + ", ".join(parts)


def analyze(name: str, command: List[str], outcomes: Dict[str, Outcome], baseline: str,
            seed: int = stats.SEED) -> WorkloadResult:
    checksum, error = check_checksums(outcomes)
    configs = [ConfigResult(c, o.runs, o.failure) for c, o in outcomes.items()]
    base = next((c for c in configs if c.name == baseline and c.runs), None)
    for k, config in enumerate(configs):
        if not config.runs:
            continue
        for key, _title, value in METRICS:
            values = [value(m) for m in config.runs]
            config.summaries[key] = stats.summarize(values, seed=seed + k)
            if base is not None:
                config.ratios[key] = stats.ratio(values, [value(m) for m in base.runs],
                                                 seed=seed + 100 + k)
    return WorkloadResult(name, command, baseline, configs, checksum, error)


def _summary_dict(s) -> Dict[str, object]:
    return {"n": s.n, "mean": s.mean, "mean_ci": list(s.mean_ci), "median": s.median,
            "median_ci": list(s.median_ci), "stdev": s.stdev, "min": s.minimum, "max": s.maximum}


def _run_dict(m) -> Dict[str, object]:
    return {"wall": m.wall, "user": m.user, "sys": m.sys, "maxrss_kib": m.maxrss_kib,
            "minflt": m.minflt, "majflt": m.majflt, "exit_code": m.exit_code,
            "timed_out": m.timed_out, "checksum": m.checksum}


def document(results: List[WorkloadResult], machine: Dict[str, object],
             settings: Dict[str, object], missing: Dict[str, str]) -> Dict[str, object]:
    """machine: bench.machine.describe(); settings: runs, warmup, baseline, configs, mode,
    resamples, confidence; missing: configuration -> why it was skipped. A ratio that
    could not be computed is null (JSON has no NaN for it)."""
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
