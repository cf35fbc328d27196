"""Text pieces the tracking reports (lifetimes, temporaries, peak, leaks) share: the
header of their documents (processes, tracking source, notes) and a stack trace type's
frames, in text lines or in one CSV cell."""
from typing import List

from heapscope.analysis.tracked import NO_STACK
from heapscope.render.notes import collapse
from heapscope.render.processes import header_lines
from heapscope.render.text import counted
from heapscope.symbolize import Frame


def header_text(title: str, doc: dict, verbose: bool = False) -> List[str]:
    """verbose: every note on its own line (otherwise one line per kind of note)."""
    n = len(doc["processes"])
    out = [f"heapscope {title}: {n} process{'es' if n != 1 else ''}"]
    out += ["  " + line for line in header_lines(doc["processes"], n > 1)]
    t = doc["tracking"]
    out.append(f"  tracking  {'replayed from the event trace' if t['source'] == 'trace' else 'recorder tables'}"
               + (f", {counted(t['untracked'], 'block')} untracked"
                  + (f" ({t['untracked_bytes']:,} bytes)" if t.get("untracked_bytes") is not None else "")
                  if t["untracked"] else ""))
    if doc.get("sampling"):
        out.append(f"  sampled   call paths from stacks sampled one a mean "
                   f"{doc['sampling']['mean_bytes']:,} bytes apart: a path's figures are "
                   f"estimates (~), a size's are exact")
    for note in collapse(doc["notes"], verbose):
        out.append(f"  note      {note}")
    if doc.get("record_for_stacks"):
        out.append(f"  stacks    sizes shown without a call path get theirs with: "
                   f"{doc['record_for_stacks']}")
    return out


def est(t: dict) -> str:
    """'~' before an estimated figure (sampled stacks)."""
    return "~" if t.get("estimated") else ""


def frame_lines(t: dict, full_names: bool, indent: str = "    ") -> List[str]:
    if not t["recorded"]:
        return [f"{indent}(no stack: {NO_STACK.get(t.get('no_stack'), NO_STACK['not-selected'])})"]
    out = [f"{indent}[{i}] {Frame(**f).text(short=not full_names)}" for i, f in enumerate(t["frames"])]
    hidden = t["frames_total"] - len(t["frames"])
    if hidden > 0:
        out.append(f"{indent}... {hidden} more frame{'s' if hidden != 1 else ''}")
    return out


def frames_cell(t: dict) -> str:
    """A type's frames in one CSV cell: functions, innermost first."""
    if t["recorded"]:
        return " <- ".join(f["function"] for f in t["frames"])
    return "(allocated at start-up)" if t.get("no_stack", "").startswith("start-up") \
        else "(not recorded)"
