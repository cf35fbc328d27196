"""The recordings `heapscope scaling` compares, one Run per directory: the job report's
per-rank figures (analysis.job over the job file and rank files), who ran (program,
arguments, MPI library) and, recorded with --track, the stack types that held the ranks'
heap peaks, keyed so that one call path is one key at every rank count.

Which program ran: the job file's rank-0 command line (JOB_COMMAND), else the lowest rank
file's; which MPI: the job file's JOB_MPI_LIBRARY, else the lowest rank file's
MPI_LIBRARY. same_program() refuses recordings of different programs or inputs; a
program built once per MPI (Debian's gmx_mpi.openmpi and gmx_mpi.mpich) is one program
when the recordings ran on different MPI libraries.
"""
import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from heapscope.analysis import job as job_analysis
from heapscope.analysis.by_library import NO_MODULE, is_runtime
from heapscope.analysis.job_loading import load_summaries, read_job
from heapscope.analysis.job_peak_stacks import document as peak_stacks_document
from heapscope.errors import HeapscopeError
from heapscope.profile import format as fmt
from heapscope.profile.framing import parse, read_file
from heapscope.profile.mpi_library import MpiLibrary, decode as decode_library

# an executable's MPI flavour suffix (Debian builds one binary per MPI)
_FLAVOUR = re.compile(r"[._-](openmpi|mpich|ompi|mvapich2?|intelmpi)$")


@dataclass
class PeakType:
    key: tuple                      # (region, frames as (function, module, line or offset))
    region: str
    frames: List[dict]              # symbolized, innermost first (frames_json)
    library: str                    # the module that asked (by_library's rule)
    bytes_max: int                  # the most one rank held at its peak
    ranks: int                      # ranks where it is among their largest
    bytes: int                      # summed over those ranks
    size_min: int
    size_max: int


@dataclass
class Run:
    path: str                       # the directory (or files) named
    ranks: int                      # MPI_COMM_WORLD's size
    exe: str
    argv: List[str]
    library: Optional[MpiLibrary]
    stats: Dict[str, Optional[dict]]    # the job report's: metric -> min/max/mean over ranks
    sampled: List[str]              # metrics from timeline samples (lower bounds)
    warnings: List[str]
    peak_types: Optional[List[PeakType]] = None   # None: peak_absent says why
    peak_absent: Optional[str] = None
    ranks_tracked: int = 0
    peak_exact: bool = True         # False: the job file's types are lower bounds
    by_value: Optional[str] = None  # the value of --by VAR

    @property
    def program(self) -> str:
        """The program's name: argv[0]'s (or the executable's) base name without an MPI
        flavour suffix."""
        name = os.path.basename(self.argv[0] if self.argv else self.exe) or "?"
        return _FLAVOUR.sub("", name)

    @property
    def library_label(self) -> str:
        return self.library.label if self.library else "MPI library unknown"


def load_run(path: str, symbolizer=None) -> Run:
    """One recording: a directory (or the files) of one MPI job."""
    try:
        job_file = read_job([path])
        summaries = load_summaries([path], job=job_file)
        doc = job_analysis.build(summaries, timeline_points=1, job=job_file)
    except HeapscopeError as exc:
        raise HeapscopeError(f"{path}: {exc}") from None
    ranked = sorted((s for s in summaries if s.rank >= 0), key=lambda s: s.rank)
    argv = job_file.cmdline if job_file is not None and job_file.cmdline else \
        (ranked[0].cmdline if ranked else [])
    exe = job_file.exe if job_file is not None else (ranked[0].exe if ranked else "")
    library = job_file.mpi_library if job_file is not None else None
    for s in ranked:
        if library is not None:
            break
        library = _file_library(s.path)
    run = Run(path=path, ranks=doc["ranks"], exe=exe, argv=list(argv), library=library,
              stats=doc["stats"], sampled=[m["key"] for m in doc["metrics"] if m["sampled"]],
              warnings=list(doc["warnings"]))
    if job_file is None:
        run.peak_absent = ("no job file (a job of one rank, or one that did not reach "
                           "MPI_Finalize): no stack types at the ranks' peaks")
    else:
        _peak_types(run, job_file, symbolizer)
    return run


def _file_library(path: str) -> Optional[MpiLibrary]:
    """A rank file's MPI_LIBRARY, read from its chunks (None: it has none)."""
    try:
        frame = parse(read_file(path), path)
    except HeapscopeError:
        return None
    for chunk in frame.chunks:
        if chunk.type == fmt.MPI_LIBRARY:
            try:
                return decode_library(chunk.payload)
            except Exception:
                return None
    return None


def _peak_types(run: Run, job_file, symbolizer) -> None:
    doc = peak_stacks_document(job_file, symbolizer)
    if "absent" in doc:
        run.peak_absent = doc["absent"]
        return
    ps = job_file.peak_stacks
    run.ranks_tracked = ps.ranks_tracked
    run.peak_exact = doc["exact"]
    types = []
    for raw, t in zip(ps.types, doc["types"]):
        frames = t["frames"]
        if frames:
            key = (t["region"], tuple((f["function"], os.path.basename(f["module"] or ""),
                                       f["line"] if f["line"] else f["offset"]) for f in frames))
        else:
            key = (t["region"], "size", t["size_min"])
        types.append(PeakType(key=key, region=t["region"], frames=frames,
                              library=_owner(ps, raw.frames), bytes_max=t["bytes_max"],
                              ranks=t["ranks"], bytes=t["bytes"], size_min=t["size_min"],
                              size_max=t["size_max"]))
    run.peak_types = types


def _owner(ps, frames: Sequence[Tuple[int, int]]) -> str:
    """The module that asked for a type's blocks: the first frame outside the runtime
    libraries (analysis.by_library's rule), its base name."""
    innermost = None
    for module, _ in frames:
        if module == fmt.NO_MODULE:
            continue
        path = ps.modules[module][0]
        innermost = innermost or path
        if not is_runtime(path):
            return os.path.basename(path)
    if innermost:
        return os.path.basename(innermost)
    return NO_MODULE if frames else "(no stack)"


def by_value(run: Run, var: str) -> Optional[str]:
    """The value of `var` for a run: from its command line (VAR=V, -VAR V, --VAR V,
    --VAR=V, LAMMPS' -var VAR V and -v VAR V), else from its path (a component VAR=V)."""
    args = run.argv[1:]
    for i, a in enumerate(args):
        for prefix in ("", "-", "--"):
            if a.startswith(f"{prefix}{var}="):
                return a.split("=", 1)[1]
        if a in (f"-{var}", f"--{var}") and i + 1 < len(args):
            return args[i + 1]
        if a in ("-var", "-v") and i + 2 < len(args) and args[i + 1] == var:
            return args[i + 2]
    for part in reversed(os.path.normpath(os.path.abspath(run.path)).split(os.sep)):
        if part.startswith(f"{var}="):
            return part.split("=", 1)[1]
    return None


def _without(args: List[str], var: Optional[str]) -> List[str]:
    """The arguments with --by VAR's value blanked (so runs differing only there match)."""
    if var is None:
        return list(args)
    out = list(args)
    for i, a in enumerate(out):
        for prefix in ("", "-", "--"):
            if a.startswith(f"{prefix}{var}="):
                out[i] = f"{prefix}{var}=*"
        if a in (f"-{var}", f"--{var}") and i + 1 < len(out):
            out[i + 1] = "*"
        if a in ("-var", "-v") and i + 2 < len(out) and out[i + 1] == var:
            out[i + 2] = "*"
    return out


def same_program(runs: Sequence[Run], var: Optional[str] = None) -> None:
    """Raises a one-line HeapscopeError when the runs are of different programs or inputs
    (their arguments differ other than by --by VAR's value), or lack VAR."""
    if var is not None:
        for r in runs:
            r.by_value = by_value(r, var)
            if r.by_value is None:
                raise HeapscopeError(f"{r.path}: --by {var}: no {var} in its command line "
                                     f"(`{' '.join(r.argv)}`) nor a {var}=VALUE in its path")
    first = runs[0]
    for r in runs:
        if not r.argv and not r.exe:
            raise HeapscopeError(f"{r.path}: which program ran is not recorded (no command "
                                 f"line in its job file or rank files)")
        if r.program != first.program:
            raise HeapscopeError(f"different programs: {first.path} ran {first.program}, "
                                 f"{r.path} ran {r.program}; scaling compares one program "
                                 f"at several rank counts")
        if (r.library_label == first.library_label and r.exe and first.exe
                and os.path.basename(r.exe) != os.path.basename(first.exe)):
            raise HeapscopeError(f"different programs: {first.path} ran {first.exe}, "
                                 f"{r.path} ran {r.exe}")
        if _without(r.argv[1:], var) != _without(first.argv[1:], var):
            hint = "" if var else " (name the variable that sets the problem size with --by VAR)"
            raise HeapscopeError(f"different inputs: {r.path} ran `{' '.join(r.argv)}`, "
                                 f"{first.path} ran `{' '.join(first.argv)}`{hint}")
