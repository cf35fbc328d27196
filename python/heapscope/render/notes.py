"""Notes said once: repeated notes that differ only in the file they name collapse into
one line with a count (an MPI program's 27 "no debug info for .../mca_*.so" become one),
`--verbose` lists them all.

Notes are grouped by their wording with each path taken out; a group of COLLAPSE_FROM
or more becomes one line: the first note, then how many more there are and a few of
their file names.
"""
import os
import re
from typing import Dict, Iterable, List

COLLAPSE_FROM = 3
NAMES_SHOWN = 3
_PATH = re.compile(r"(?<![\w.])/[^\s;:,()]+")
_NO_DEBUG = re.compile(r"^no debug info for (\S+); (.*)$")


def collapse(lines: Iterable[str], verbose: bool = False) -> List[str]:
    lines = [line for line in lines if line]
    if verbose:
        return lines
    groups: Dict[str, List[str]] = {}
    for line in lines:
        groups.setdefault(_PATH.sub("PATH", line), []).append(line)
    out: List[str] = []
    done = set()
    for line in lines:
        shape = _PATH.sub("PATH", line)
        if shape in done:
            continue
        members = groups[shape]
        if len(members) < COLLAPSE_FROM:
            out.append(line)
            continue
        done.add(shape)
        out.append(_one_line(members))
    return out


def _names(members: List[str]) -> str:
    names = []
    for line in members:
        m = _PATH.search(line)
        names.append(os.path.basename(m.group(0)) if m else line)
    names.sort()
    shown = ", ".join(names[:NAMES_SHOWN])
    more = len(names) - NAMES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _one_line(members: List[str]) -> str:
    n = len(members)
    if all(_NO_DEBUG.match(m) for m in members):
        advice = _NO_DEBUG.match(members[0]).group(2)
        advice = advice.replace("install its -dbgsym package", "install their -dbgsym packages")
        return (f"no debug info for {n} libraries ({_names(members)}; --verbose lists them); "
                f"{advice}")
    return f"{members[0]} (and {n - 1} more like it: {_names(members[1:])}; --verbose lists them)"
