"""From the runs of each configuration on one command to what the reports show:
per metric a Summary (mean, median, intervals) and a Ratio to the baseline, and the
checksum check (every run that printed a checksum must print the same one).
"""
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
