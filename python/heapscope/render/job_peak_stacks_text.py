"""Text of the job report's `peak_stacks` section (analysis.job_peak_stacks): the stack
types that held the ranks' heap peaks, from the job file."""
from typing import List, Optional

from heapscope.render.notes import collapse
from heapscope.render.text import counted, num
from heapscope.render.tracked_text import frame_lines

FRAMES_SHOWN = 8


def _sizes(t: dict) -> str:
    lo, hi = t["size_min"], t["size_max"]
    return f"of {num(lo)} bytes" if lo == hi else f"of {num(lo)} to {num(hi)} bytes"


def lines(doc: Optional[dict], full_names: bool = False, verbose: bool = False) -> List[str]:
    """verbose: every note on its own line (otherwise one line per kind of note)."""
    if doc is None:
        return []
    title = "Who held the heap peak (stack types live at each rank's own tracking peak)"
    if "absent" in doc:
        return ["", title, f"  {doc['absent']}"]
    out = ["", title,
           f"  {doc['ranks_tracked']} of {counted(doc['ranks'], 'rank')} recorded with --track, "
           f"each giving its {doc['per_rank']} largest types; bytes are requested bytes, summed "
           f"over the ranks where the type is among those"]
    if not doc["exact"]:
        out.append(f"  lower bounds: more types than a message of the reduction keeps; a type's "
                   f"ranks and bytes may be short (bytes by at most {num(doc['missing_bound'])})")
    if not doc["types"]:
        out.append("  no tracked block was live at any rank's peak")
    for t in doc["types"]:
        out += ["", f"  {t['rank']}. {num(t['bytes'])} bytes on {counted(t['ranks'], 'rank')} "
                    f"(most: {num(t['bytes_max'])} on r{t['max_rank']}), "
                    f"{counted(t['blocks'], 'block')} {_sizes(t)} in {t['region']}"]
        shown = dict(t, frames=t["frames"][:FRAMES_SHOWN])
        out += frame_lines(shown, full_names, "    ")
    for note in collapse(doc["notes"], verbose):
        out.append(f"  note: {note}")
    return out
