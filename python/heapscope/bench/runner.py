"""Running commands and measuring them.

measure() runs one command and reads its resources from wait4 (the kernel's rusage
of the child and of the descendants it waited for: user, sys, max RSS, minor and
major faults), plus the wall time, its exit status, the "checksum: <hex>" line it
printed and the tail of its stderr. The wait4 is done by the small launcher
native/bin/hs-measure (workloads/tools/hs_measure.c): Linux keeps the peak RSS
across execve, so a command forked straight from this Python process would inherit
Python's tens of MiB as its "maximum RSS". Without the launcher (not built), the
command is forked from Python and waited for with os.wait4, RSS figures inflated.

run_interleaved() runs every configuration once per round, in the same order each
round (A B C A B C ...), after `warmup` rounds that are not counted, so slow drifts
of the machine spread over all configurations alike. A configuration whose run fails
(non-zero exit, signal, timeout) is dropped: its runs are not counted and it is not
run again; the failure is kept for the report.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from heapscope.errors import HeapscopeError
from heapscope.native import native_dir

CHECKSUM = re.compile(rb"^checksum: *([0-9a-fA-F]+)\s*$", re.MULTILINE)
STDERR_TAIL = 1500   # characters of stderr kept for a failure report


@dataclass
class Measurement:
    wall: float          # seconds, from just before the fork to the reaping
    user: float          # CPU seconds (child and its waited-for descendants)
    sys: float
    maxrss_kib: int      # largest resident set of the child or one descendant
    minflt: int
    majflt: int
    exit_code: int       # the exit status, or 128 + N when signal N killed it
    timed_out: bool = False
    checksum: Optional[str] = None
    stderr_tail: str = ""

    @property
    def cpu(self) -> float:
        return self.user + self.sys

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def failure_text(self) -> str:
        if self.timed_out:
            what = "timed out and was killed"
        elif self.exit_code > 128:
            sig = self.exit_code - 128
            try:
                what = f"was killed by {signal.Signals(sig).name}"
            except ValueError:
                what = f"was killed by signal {sig}"
        else:
            what = f"exited with code {self.exit_code}"
        tail = self.stderr_tail.strip()
        return what + (f"; stderr ends with:\n{tail}" if tail else "; no stderr")


def _kill_group(pid: int, flag: List[bool]) -> None:
    flag[0] = True
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _last_checksum(stream) -> Optional[str]:
    stream.seek(0)
    found = None
    for match in CHECKSUM.finditer(stream.read()):
        found = match.group(1).decode().lower()
    return found


def _tail(stream) -> str:
    stream.seek(0, os.SEEK_END)
    size = stream.tell()
    stream.seek(max(0, size - 4 * STDERR_TAIL))
    text = stream.read().decode(errors="replace")
    return text[-STDERR_TAIL:]


def launcher() -> Optional[str]:
    path = native_dir() / "bin" / "hs-measure"
    return str(path) if path.exists() else None


def _parse_launcher(path: str) -> Optional[dict]:
    try:
        with open(path) as f:
            fields = dict(item.split("=", 1) for item in f.read().split())
        parsed = {k: int(v) for k, v in fields.items()}
        return parsed if "status" in parsed else None
    except (OSError, ValueError):
        return None


def check_program(argv: List[str], env: Optional[Dict[str, str]], cwd: Optional[str]) -> None:
    if not argv:
        raise HeapscopeError("no command to run")
    prog = argv[0]
    if "/" in prog:
        path = prog if os.path.isabs(prog) or cwd is None else os.path.join(cwd, prog)
        if not os.path.exists(path):
            raise HeapscopeError(f"cannot run {prog}: no such file")
    elif shutil.which(prog, path=(env or os.environ).get("PATH")) is None:
        raise HeapscopeError(f"cannot run {prog}: command not found")


def measure(argv: List[str], env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None,
            timeout: Optional[float] = None) -> Measurement:
    """Run argv to completion (in its own process group) and measure it."""
    check_program(argv, env, cwd)
    wrapper = launcher()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(prefix="hs-measure-", suffix=".txt") as usage_file:
        full = [wrapper, usage_file.name, *argv] if wrapper else list(argv)
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    env=env, cwd=cwd, start_new_session=True)
        except OSError as exc:
            raise HeapscopeError(f"cannot run {full[0]}: {exc.strerror or exc}")
        killed = [False]
        timer = threading.Timer(timeout, _kill_group, (proc.pid, killed)) if timeout else None
        if timer:
            timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            _kill_group(proc.pid, [False])
            os.waitpid(proc.pid, 0)
            proc.returncode = -1
            raise
        finally:
            if timer:
                timer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)   # reaped: Popen must not wait
        result = dict(status=status, utime_us=int(usage.ru_utime * 1e6),
                      stime_us=int(usage.ru_stime * 1e6), maxrss_kib=usage.ru_maxrss,
                      minflt=usage.ru_minflt, majflt=usage.ru_majflt)
        if wrapper:
            inner = _parse_launcher(usage_file.name)
            if inner is None and not killed[0]:
                raise HeapscopeError(f"{wrapper} failed: {_tail(err).strip() or 'no output'}")
            if inner is not None:
                result = inner
        code = os.waitstatus_to_exitcode(result["status"])
        return Measurement(
            wall=wall, user=result["utime_us"] / 1e6, sys=result["stime_us"] / 1e6,
            maxrss_kib=result["maxrss_kib"], minflt=result["minflt"], majflt=result["majflt"],
            exit_code=code if code >= 0 else 128 - code, timed_out=killed[0],
            checksum=_last_checksum(out), stderr_tail=_tail(err))


@dataclass
class Job:
    config: str
    round: int
    warmup: bool


def schedule(configs: List[str], runs: int, warmup: int) -> List[Job]:
    """Warm-up rounds, then `runs` rounds; each round every configuration once, in order."""
    jobs = [Job(c, r, True) for r in range(warmup) for c in configs]
    jobs += [Job(c, r, False) for r in range(runs) for c in configs]
    return jobs


@dataclass
class Outcome:
    """What happened to one configuration on one command."""
    runs: List[Measurement] = field(default_factory=list)      # counted runs, in order
    warmups: List[Measurement] = field(default_factory=list)
    failure: Optional[Measurement] = None                      # the run that dropped it

    @property
    def failed(self) -> bool:
        return self.failure is not None


class Progress:
    """Progress on stderr: a bar on a terminal; otherwise one line per command."""

    def __init__(self, total: int, stream=None, enabled: bool = True):
        self.total, self.done = total, 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and self.stream.isatty()

    def start(self, label: str, runs: int) -> None:
        if self.enabled and not self.tty:
            self.stream.write(f"bench: {label}: {runs} runs "
                              f"({self.done}/{self.total} done)\n")
            self.stream.flush()

    def step(self, label: str) -> None:
        self.done += 1
        if not self.tty:
            return
        width = 30
        filled = width * self.done // max(1, self.total)
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] "
                          f"{self.done}/{self.total} {label[:50]:<50}")
        if self.done == self.total:
            self.stream.write("\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\n")
        self.stream.write(text + "\n")
        self.stream.flush()


Runner = Callable[[str], Measurement]


def run_interleaved(configs: List[str], runs: int, warmup: int, run_one: Runner,
                    progress: Optional[Progress] = None, label: str = "") -> Dict[str, Outcome]:
    """Run schedule(configs, runs, warmup) through run_one(config) -> Measurement."""
    outcomes = {c: Outcome() for c in configs}
    jobs = schedule(configs, runs, warmup)
    if progress:
        progress.start(label, len(jobs))
    for job in jobs:
        outcome = outcomes[job.config]
        if outcome.failed:
            if progress:
                progress.step(f"{label} {job.config} (dropped)")
            continue
        m = run_one(job.config)
        if progress:
            kind = "warm-up" if job.warmup else f"run {job.round + 1}"
            progress.step(f"{label} {job.config} {kind} {m.wall:.2f}s")
        if not m.ok:
            outcome.failure = m
            if progress:
                progress.note(f"heapscope bench: {label} under {job.config}: "
                              f"{m.failure_text().splitlines()[0]}")
            continue
        (outcome.warmups if job.warmup else outcome.runs).append(m)
    for outcome in outcomes.values():
        if outcome.failed:
            outcome.runs = []     # a failing configuration's runs are not counted
    return outcomes


def runner_for(argv: List[str], configs: Dict[str, "object"], base_env: Dict[str, str],
               timeout: Optional[float]) -> Runner:
    """run_one(config name): build the config's command, give it a scratch dir if it
    needs one (deleted afterwards), measure it."""
    def run_one(name: str) -> Measurement:
        config = configs[name]
        if config.needs_scratch:
            with tempfile.TemporaryDirectory(prefix="hs-bench-") as scratch:
                run_argv, env = config.build(argv, base_env, scratch)
                return measure(run_argv, env, timeout=timeout)
        run_argv, env = config.build(argv, base_env, None)
        return measure(run_argv, env, timeout=timeout)
    return run_one
