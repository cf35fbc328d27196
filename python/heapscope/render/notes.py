"""Notes said once: one line per kind of note, `--verbose` (text) or a fold (the HTML
page) lists them all.

A kind is a note's wording with what varies from one note to the next taken out (file
paths, build-ids and other long hex numbers, counts): an MPI program's 49 "no debug info
for .../mca_*.so" are one kind, said as "no debug info for 49 libraries (a, b, c and 46
more; --verbose lists them)". A kind of one note is said as it is; an identical note
coming from two sources is one note. A new wording needs nothing here: it is a kind of
its own, collapsed in the generic way ("... (and 3 more like it ...)").
"""
import os
import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List

NAMES_SHOWN = 3
_PATH = re.compile(r"(?<![\w.])/[^\s;:,()]+")
_HEX = re.compile(r"\b(?:0x)?[0-9a-f]{8,}\b")
_NUMBER = re.compile(r"\d[\d,.]*")
_NO_DEBUG = re.compile(r"^no debug info for (\S+); (.*)$")
VERBOSE = "; --verbose lists them"


@dataclass
class Kind:
    members: List[str] = field(default_factory=list)   # every note of the kind, in order

    @property
    def line(self) -> str:
        """What a text report says for the whole kind (pointing at --verbose)."""
        return self.members[0] if len(self.members) == 1 else _one_line(self.members, VERBOSE)

    @property
    def summary(self) -> str:
        """The same line for a page, where the list is a fold under it."""
        return self.members[0] if len(self.members) == 1 else _one_line(self.members, "")


def kind_of(line: str) -> str:
    """The wording of a note with its paths, hex ids and counts taken out."""
    return _NUMBER.sub("N", _HEX.sub("HEX", _PATH.sub("PATH", line)))


def kinds(lines: Iterable[str]) -> List[Kind]:
    """The notes grouped by kind, kinds in the order of their first note; repeats of one
    note (the same symbolizer note in two documents) counted once."""
    groups: Dict[str, Kind] = {}
    seen = set()
    for line in lines:
        if not line or line in seen:
            continue
        seen.add(line)
        groups.setdefault(kind_of(line), Kind()).members.append(line)
    return list(groups.values())


def collapse(lines: Iterable[str], verbose: bool = False) -> List[str]:
    """One line per kind; verbose: every note (repeats of one note still said once)."""
    if verbose:
        return list(dict.fromkeys(line for line in lines if line))
    return [k.line for k in kinds(lines)]


def _names(members: List[str]) -> str:
    names = []
    for line in members:
        m = _PATH.search(line)
        names.append(os.path.basename(m.group(0)) if m else "")
    names = sorted(n for n in names if n)
    shown = ", ".join(names[:NAMES_SHOWN])
    more = len(names) - NAMES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _one_line(members: List[str], pointer: str) -> str:
    n = len(members)
    if all(_NO_DEBUG.match(m) for m in members):
        advice = _NO_DEBUG.match(members[0]).group(2)
        advice = advice.replace("install its -dbgsym package", "install their -dbgsym packages")
        return f"no debug info for {n} libraries ({_names(members)}{pointer}); {advice}"
    names = _names(members[1:])
    return f"{members[0]} (and {n - 1} more like it{': ' + names if names else ''}{pointer})"
