"""Massif export: one process's heap over time as a massif.out file (ms_print,
massif-visualizer).

The file is Massif's text format: `desc:`, `cmd:` and `time_unit:` lines, then
snapshots, each `snapshot=N`, `time=T`, `mem_heap_B`, `mem_heap_extra_B`,
`mem_stacks_B` and `heap_tree=empty|detailed|peak`; a detailed or peak snapshot is
followed by its allocation tree, one node per line, `nK: BYTES LABEL` indented by
its depth, K its number of children, children most bytes first, the root labelled
as Massif labels it and every other node `0xADDR: function (file:line)`.

What goes in:
  timeline   (Profile.timeline) every sample with a heap figure is an empty snapshot:
             heap in use at that time (mem_heap_B; what the timeline measured, see
             Timeline.heap_measure; samples of a timeline recorded without the heap
             are left out)
  tracking   (Profile.tracking) a `peak` snapshot at the time of the heap peak whose
             tree merges the stack trace types by their frames (outermost callers
             deepest), weighted by bytes live at the peak; and a `detailed` snapshot at
             the profile's snapshot (exit) whose tree holds the blocks still live
             (leaks). mem_heap_extra_B there is estimated from the per-size extra
             bytes (Tracking.extra: usable minus requested, mean per block).
The heap figures are the program's blocks alone; the recorder's own memory (its tables,
rings, buffers), when the timeline measured it, is named with its largest value on the
`desc:` line (Massif has no field for memory besides the heap).
Times are whole milliseconds since the process started (time_unit: ms). Blocks of
sizes tracked without stacks are one node per size, `[stack not recorded]`; blocks
not tracked at all (table full) one node `[untracked blocks]`.
"""
import os
import shlex
from typing import Dict, List, Optional, Tuple

from heapscope.errors import HeapscopeError
from heapscope.profile.model import Profile
from heapscope.symbolize import Frame, Symbolizer

ROOT_LABEL = "(heap allocation functions) malloc/new/new[], --alloc-fns, etc."


class _Node:
    __slots__ = ("label", "bytes", "children")

    def __init__(self, label: str):
        self.label = label
        self.bytes = 0
        self.children: Dict[tuple, "_Node"] = {}

    def child(self, key: tuple, label: str) -> "_Node":
        node = self.children.get(key)
        if node is None:
            node = self.children[key] = _Node(label)
        return node

    def lines(self, depth: int = 0) -> List[str]:
        kids = sorted(self.children.values(), key=lambda n: (-n.bytes, n.label))
        out = [f"{' ' * depth}n{len(kids)}: {self.bytes} {self.label}"]
        for k in kids:
            out += k.lines(depth + 1)
        return out


def _clean(text: str) -> str:
    """ms_print drops everything after '#' on a line, and a label is one line."""
    return text.replace("#", " ").replace("\n", " ").replace("\r", " ")


def frame_label(address: int, frame: Frame) -> str:
    if frame.file:
        where = f"({os.path.basename(frame.file)}:{frame.line})"
    else:
        where = f"(in {frame.module or '?'})"
    return _clean(f"0x{address:X}: {frame.function} {where}")


def build_tree(profile: Profile, attr: str, total: int, sym: Symbolizer) -> _Node:
    """The allocation tree of the tracked stack types weighted by `attr` (bytes of
    Lifetimes: live_at_peak_bytes or live_at_end_bytes); `total` is the root's bytes,
    the difference to the stack types' sum being untracked blocks."""
    t = profile.tracking
    stacks = [s for s in t.stacks if getattr(s.life, attr) > 0]
    resolved = sym.resolve(profile, {a for s in stacks for a in s.frames})
    root = _Node(ROOT_LABEL)
    root.bytes = total
    for s in stacks:
        nbytes = getattr(s.life, attr)
        if not s.frames:
            node = root.child(("nostack", s.size), f"0x0: [stack not recorded] (size {s.size})")
            node.bytes += nbytes
            continue
        node = root
        for address in s.frames:
            for i, frame in enumerate(resolved[address]):
                node = node.child((address, i), frame_label(address, frame))
                node.bytes += nbytes
    attributed = sum(c.bytes for c in root.children.values())
    if total > attributed:
        root.child(("untracked",), "0x0: [untracked blocks]").bytes = total - attributed
    elif total < attributed:
        root.bytes = attributed   # a parent never holds less than its children
    return root


def _extra_estimate(profile: Profile, attr_blocks: str) -> int:
    """Extra heap bytes of the blocks counted by `attr_blocks`, from the mean extra per
    block of their size."""
    t = profile.tracking
    total = 0.0
    for s in t.stacks:
        blocks = getattr(s.life, attr_blocks)
        have, extra = t.extra.get(s.size, (0, 0))
        if blocks and have:
            total += blocks * extra / have
    return int(round(total))


Snapshot = Tuple[int, int, int, str, Optional[_Node]]   # ns, heap, extra, kind, tree


def snapshots(profile: Profile, sym: Symbolizer) -> List[Snapshot]:
    out: List[Snapshot] = []
    if profile.timeline is not None:   # samples without a heap figure (heap not sampled) are left out
        out += [(s.mono_ns, s.heap_bytes, 0, "empty", None) for s in profile.timeline.samples
                if s.heap_bytes >= 0]
    t = profile.tracking
    if t is not None:
        out.append((t.peak_mono_ns, t.peak_bytes, _extra_estimate(profile, "live_at_peak"), "peak",
                    build_tree(profile, "live_at_peak_bytes", t.peak_bytes, sym)))
        end_ns = max(profile.snapshot_mono_ns, t.peak_mono_ns)
        out.append((end_ns, t.end_bytes, _extra_estimate(profile, "live_at_end"), "detailed",
                    build_tree(profile, "live_at_end_bytes", t.end_bytes, sym)))
    out.sort(key=lambda s: s[0])   # stable: at equal times the peak stays before the end
    if not out or out[0][0] > 0 or out[0][1] > 0:
        out.insert(0, (0, 0, 0, "empty", None))
    return out


def _heap_timeline(profile: Profile) -> bool:
    t = profile.timeline
    return t is not None and any(s.heap_bytes >= 0 for s in t.samples)


def to_massif(profile: Profile, sym: Optional[Symbolizer] = None) -> str:
    if profile.tracking is None and not _heap_timeline(profile):
        why = ("its timeline did not sample the heap" if profile.timeline is not None
               else "it has neither tracking data nor a timeline")
        raise HeapscopeError(f"{profile.path}: nothing to export to Massif ({why}): record with "
                             f"`heapscope record --track` or `--timeline-heap on`")
    sym = sym or Symbolizer()
    what = [w for w, have in (("timeline", _heap_timeline(profile)),
                              ("tracking", profile.tracking is not None)) if have]
    cmd = shlex.join(profile.cmdline) if profile.cmdline else (profile.exe or "?")
    own = [s.recorder_bytes for s in profile.timeline.samples if s.recorder_bytes >= 0] \
        if profile.timeline is not None else []
    beside = (f"; the recorder's own memory, in no figure here: at most {max(own)} bytes resident"
              if own else "")
    lines = [f"desc: heapscope export of {_clean(profile.path)} ({' and '.join(what)}; {profile.label}"
             f"{beside})",
             f"cmd: {_clean(cmd)}", "time_unit: ms"]
    for n, (ns, heap, extra, kind, tree) in enumerate(snapshots(profile, sym)):
        lines += ["#-----------", f"snapshot={n}", "#-----------", f"time={ns // 1_000_000}",
                  f"mem_heap_B={heap}", f"mem_heap_extra_B={extra}", "mem_stacks_B=0",
                  f"heap_tree={kind}"]
        if tree is not None:
            lines += tree.lines()
    return "\n".join(lines) + "\n"

