"""Symbolized call paths with weights: what the call graph, the diff and the exports consume.

A WeightedStack is one stack trace type (or a merge of identical ones from several
processes): its frames innermost first (frame 0 is in the code that called the
allocation function), how many allocations took that path and how many bytes they
asked for. Frames are heapscope.symbolize.Frame: an inlined function is a frame of
its own, flagged `inlined`, placed before the frame it was inlined into (both come
from one return address). Analyses never look at raw addresses: two runs of two
builds of a program are matched by function, file and line (`identity`).

`document` is a list of weighted stacks as plain data: `heapscope export --format json`.
"""
import os
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from heapscope.analysis.processes import describe
from heapscope.profile.model import Profile
from heapscope.symbolize.frames import Frame

EXPORT_FORMAT = "heapscope-export"
EXPORT_VERSION = 1

UNKNOWN_FUNCTION = "??"


def frame_name(frame: Frame) -> str:
    """The function, or a placeholder naming the module when the symbol is unknown."""
    if frame.function and frame.function != UNKNOWN_FUNCTION:
        return frame.function
    module = os.path.basename(frame.module) if frame.module else "unknown module"
    return f"?? ({module}+{frame.offset:#x})"


def function_name(frame: Frame) -> str:
    """The function a frame is in: its name, or for an unnamed frame whose function's
    start is known (Frame.function_start) "?? (module+start)", one name for every call
    made from that function; else frame_name."""
    if frame.function_start and (not frame.function or frame.function == UNKNOWN_FUNCTION):
        module = os.path.basename(frame.module) if frame.module else "unknown module"
        return f"?? ({module}+{frame.function_start:#x})"
    return frame_name(frame)


PROGRAM_MODULE = "(program)"
_SHARED_OBJECT = re.compile(r"\.so(\.[0-9.]+)?$")


def module_identity(module: str) -> str:
    """A module as frames are matched: a shared library by its file name; the program
    itself, whatever its file is called, as "(program)" (a rebuilt program is often
    renamed: prog_old and prog_new)."""
    name = os.path.basename(module) if module else ""
    if not name or name.startswith("[") or _SHARED_OBJECT.search(name):
        return name
    return PROGRAM_MODULE


def identity(frame: Frame) -> Tuple[str, str, int]:
    """How frames of two runs are matched: function, source file name and line (not the
    file's directory: two checkouts of a program compare). A frame without line
    information is matched by function and module (its offset changes with every
    build); an unresolved one (??) by module and offset, the only thing that tells it
    from the others (a stripped program's frames are all ??: matched by name alone,
    its 121 call paths merged into two)."""
    if frame.file:
        return (frame.function, os.path.basename(frame.file), frame.line)
    if not frame.function or frame.function == UNKNOWN_FUNCTION:
        return (frame_name(frame), module_identity(frame.module), 0)
    return (frame.function, module_identity(frame.module), 0)


@dataclass(frozen=True)
class WeightedStack:
    frames: Tuple[Frame, ...]  # innermost first
    count: int                 # allocations that took this path
    bytes: int                 # bytes they asked for
    region: str = ""           # region path
    size: int = 0              # exact requested size
    samples: int = 0           # sampled stacks: the samples behind count (an estimate); 0 = exact
    paths: int = 1             # recorded stack trace types merged into this one (one per
                               # process, or call sites that symbolize alike)

    @property
    def repeats(self) -> int:
        """Allocations beyond the first of each recorded path: what repeats."""
        return max(self.count - self.paths, 0)

    @property
    def repeated_bytes(self) -> int:
        return self.bytes * self.repeats // self.count if self.count else 0

    @property
    def key(self) -> tuple:
        """Identity across runs and processes: region, size and symbolized frames."""
        return (self.region, self.size, tuple(identity(f) for f in self.frames))


def merge_stacks(stacks: Iterable[WeightedStack]) -> List[WeightedStack]:
    """Add up stacks with the same region, size and symbolized frames (several processes,
    or types that differed only below the symbol level). Most allocations first."""
    merged: Dict[tuple, List] = {}
    identities: Dict[int, tuple] = {}   # by id(frame): stacks share their Frame objects
    for s in stacks:
        ids = []
        for f in s.frames:
            i = identities.get(id(f))
            if i is None:
                i = identities[id(f)] = (f, identity(f))   # f kept: its id stays its own
            ids.append(i[1])
        key = (s.region, s.size, tuple(ids))
        acc = merged.get(key)
        if acc is None:
            merged[key] = [s, s.count, s.bytes, s.samples, s.paths]
        else:
            acc[1] += s.count
            acc[2] += s.bytes
            acc[3] += s.samples
            acc[4] += s.paths
    order = sorted(merged.items(), key=lambda kv: (-kv[1][1], kv[0]))   # (region, size, frames)
    out = [WeightedStack(first.frames, count, nbytes, first.region, first.size, samples, paths)
           for _, (first, count, nbytes, samples, paths) in order]
    return out


def totals(stacks: Iterable[WeightedStack]) -> Tuple[int, int]:
    count = nbytes = 0
    for s in stacks:
        count += s.count
        nbytes += s.bytes
    return count, nbytes


def physical_frames(frames: Iterable[Frame]) -> List[List[Frame]]:
    """Group a stack's frames by return address: each group is the inlined frames
    (innermost first) followed by the function they were inlined into."""
    groups: List[List[Frame]] = []
    current: List[Frame] = []
    for f in frames:
        current.append(f)
        if not f.inlined:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups


def document(stacks: Sequence[WeightedStack], profiles: Sequence[Profile], size: Optional[str],
             region: Optional[str]) -> dict:
    """The stacks (most allocations first) with their frames innermost first, the
    processes they come from, the selection, and the totals."""
    count, nbytes = totals(stacks)
    return dict(format=EXPORT_FORMAT, version=EXPORT_VERSION,
                processes=[describe(p) for p in profiles],
                filters=dict(size=size, region=region),
                totals=dict(types=len(stacks), count=count, bytes=nbytes),
                lost_stacks=sum(p.lost_stacks for p in profiles),
                stacks=[dict(region=s.region, size=s.size, count=s.count, bytes=s.bytes,
                             frames=[f.to_json() for f in s.frames]) for s in stacks])
