"""What a benchmark compares: one Config per allocator, or per profiler mode.

A Config turns the measured command into the command actually run: an argv prefix
(e.g. valgrind) and environment additions (LD_PRELOAD, HEAPSCOPE_*). The string
"{out}" in either is replaced by a fresh scratch directory per run, deleted after it.
"""
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from heapscope import allocators
from heapscope.errors import HeapscopeError
from heapscope.native import native_dir


@dataclass
class Config:
    name: str
    prefix: List[str] = field(default_factory=list)
    env: Dict[str, str] = field(default_factory=dict)
    preload: Optional[str] = None      # library put first in LD_PRELOAD
    what: str = ""                     # one line for the reports' legend

    @property
    def needs_scratch(self) -> bool:
        return any("{out}" in s for s in self.prefix + list(self.env.values()))

    def build(self, argv: List[str], base_env: Dict[str, str],
              scratch: Optional[str]) -> Tuple[List[str], Dict[str, str]]:
        sub = (lambda s: s.replace("{out}", scratch)) if scratch else (lambda s: s)
        env = dict(base_env)
        env.update({k: sub(v) for k, v in self.env.items()})
        if self.preload:
            old = base_env.get("LD_PRELOAD", "")
            env["LD_PRELOAD"] = self.preload + (" " + old if old else "")
        return [sub(s) for s in self.prefix] + list(argv), env


def missing_allocator_message(name: str) -> str:
    if name == "hsmalloc":
        return (f"hsmalloc skipped: {native_dir() / 'lib' / 'libhsmalloc.so'} is not built "
                f"(build the allocator component, src/allocator)")
    return f"{name} skipped: not installed (apt-get install {allocators.PEERS[name][1]})"


def allocator_configs(names: List[str]) -> Tuple[List[Config], Dict[str, str]]:
    """Configs for the allocators that exist, and {name: message} for those missing."""
    configs, missing = [], {}
    for name in names:
        if name not in allocators.ALL:
            raise HeapscopeError(f"unknown allocator '{name}' (choose from {', '.join(allocators.ALL)})")
        if name == "glibc":
            configs.append(Config("glibc", what="the C library's malloc (no preload)"))
            continue
        path = allocators.find_allocator(name)
        if path is None:
            missing[name] = missing_allocator_message(name)
        else:
            configs.append(Config(name, preload=str(path), what=f"LD_PRELOAD={path}"))
    return configs, missing


def profiler_configs(stack_size: int) -> Tuple[List[Config], Dict[str, str]]:
    """Plain run, the recorder's modes, heaptrack, Valgrind Massif.

    The recorder is preloaded directly with its HEAPSCOPE_* variables (the documented
    way to record without `heapscope record`, and what `record --track`/`--trace` set),
    so a Python start-up (about 0.4 s of CPU for `heapscope record`) is not counted
    as recorder overhead.
    """
    configs, missing = [Config("plain", what="the command alone")], {}
    recorder = native_dir() / "lib" / "libheapscope.so"
    if recorder.exists():
        base = {"HEAPSCOPE_OUTPUT_DIR": "{out}"}
        configs.append(Config("record-counts", env=dict(base), preload=str(recorder),
                              what="libheapscope.so preloaded: counts per size and region"))
        configs.append(Config(f"record-stacks-{stack_size}",
                              env=dict(base, HEAPSCOPE_STACK_SIZES=str(stack_size)),
                              preload=str(recorder),
                              what=f"counts, and stack trace types of {stack_size}-byte "
                                   f"allocations (HEAPSCOPE_STACK_SIZES={stack_size})"))
        configs.append(Config("record-stacks-all", env=dict(base, HEAPSCOPE_STACK_SIZES="all"),
                              preload=str(recorder),
                              what="counts, and stack trace types of every size "
                                   "(HEAPSCOPE_STACK_SIZES=all)"))
        for mode in ("track", "trace"):
            var = f"HEAPSCOPE_{mode.upper()}"
            configs.append(Config(f"record-{mode}", env=dict(base, **{var: "1"}),
                                  preload=str(recorder),
                                  what=f"what `heapscope record --{mode}` runs: libheapscope.so "
                                       f"preloaded with {var}=1"
                                       + (" (the writer thread's CPU included)"
                                          if mode == "trace" else "")))
    else:
        missing["record"] = f"heapscope record skipped: {recorder} is not built"
    if shutil.which("heaptrack"):
        configs.append(Config("heaptrack", prefix=["heaptrack", "-o", "{out}/heaptrack"],
                              what="heaptrack -o DIR/heaptrack CMD"))
    else:
        missing["heaptrack"] = "heaptrack skipped: not installed (apt-get install heaptrack)"
    if shutil.which("valgrind"):
        configs.append(Config("massif", prefix=["valgrind", "--tool=massif",
                                                "--massif-out-file={out}/massif.out"],
                              what="valgrind --tool=massif CMD"))
    else:
        missing["massif"] = "massif skipped: not installed (apt-get install valgrind)"
    return configs, missing


def hottest_size(argv: List[str], env: Dict[str, str], timeout: float) -> int:
    """The most frequently allocated size of a command, from one counting recording."""
    import tempfile
    from heapscope.profile import load_profiles
    recorder = native_dir() / "lib" / "libheapscope.so"
    if not recorder.exists():
        raise HeapscopeError(f"{recorder} is not built: give --stack-size")
    config = Config("probe", env={"HEAPSCOPE_OUTPUT_DIR": "{out}"}, preload=str(recorder))
    with tempfile.TemporaryDirectory(prefix="hs-bench-probe-") as out:
        run_argv, run_env = config.build(argv, env, out)
        try:
            res = subprocess.run(run_argv, env=run_env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise HeapscopeError(f"cannot find the hottest size ({exc}): give --stack-size")
        files = sorted(Path(out).glob("*.hsp"))
        if res.returncode != 0 or not files:
            raise HeapscopeError(f"the counting run exited {res.returncode} without a profile: "
                                 f"give --stack-size")
        totals: Dict[int, int] = {}
        for profile in load_profiles([str(f) for f in files]):
            for (_region, size), count in profile.size_counts.items():
                totals[size] = totals.get(size, 0) + count
    if not totals:
        raise HeapscopeError("the command allocated nothing: no size to record stacks for")
    return max(totals, key=lambda s: (totals[s], -s))
