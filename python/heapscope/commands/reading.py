"""Reading profiles for a command, and the lines that go to stderr on the way.

    profiles = read_profiles(args.profiles)     # the reader's warnings printed, one line each
    notes(sym.notes)                            # "heapscope: note: ..." per symbolizer note
                                                # (repeats collapsed unless --verbose)
    sym = symbolizer()                          # a Symbolizer that shows its progress
    warnings([...])                             # "heapscope: warning: ..." per line

Analysis hands these lines back as data (analysis/loading.py); only a command prints.
"""
import sys
from typing import Iterable, List, Optional, Sequence

from heapscope.analysis.loading import (left_out_lines, read, reader_warnings, require_stacks,
                                       weighted_stacks)
from heapscope.commands import progress
from heapscope.analysis.processes import leave_out_launchers
from heapscope.analysis.selection import SizeSet
from heapscope.profile.model import Profile
from heapscope.render.notes import collapse
from heapscope.symbolize import Symbolizer


def read_profiles(paths: Sequence[str], args=None) -> List[Profile]:
    """The profiles; a file that cannot be read (no snapshot, damaged) is left out with a
    warning line, unless no file can be read (then that is the error)."""
    left_out: list = []
    with progress.phase(f"reading {', '.join(paths) if len(paths) < 3 else f'{len(paths)} inputs'}"):
        profiles = without_launchers(read(paths, left_out), args)
    warnings(left_out_lines(left_out))
    for line in reader_warnings(profiles):
        print(f"heapscope: {line}", file=sys.stderr)
    return profiles


def without_launchers(profiles: List[Profile], args=None) -> List[Profile]:
    """MPI launchers and daemons (mpirun, orted, hydra_pmi_proxy ...) left out of what
    is merged, in one note line, unless --launchers (args.launchers) asks for them."""
    kept, note = leave_out_launchers(profiles, include=bool(getattr(args, "launchers", False)))
    if note:
        notes([note])
    return kept


def notes(lines: Iterable[str]) -> None:
    for line in collapse(lines, progress.VERBOSE):
        print(f"heapscope: note: {line}", file=sys.stderr)


def symbolizer() -> Symbolizer:
    """A Symbolizer whose work on each profile shows as a bar (modules looked up)."""
    sym = Symbolizer()
    sym.progress = _symbolizing
    return sym


def _symbolizing(total: int):
    """The symbolizer's progress hook: a bar over `total` modules."""
    return progress.bar("symbolizing", total=total, unit="module")


def warnings(lines: Iterable[str]) -> None:
    for line in lines:
        if line:
            print(f"heapscope: warning: {line}", file=sys.stderr)


def selected_stacks(args, program_notes: Optional[List[str]] = None):
    """(profiles, sizes, stacks): the symbolized stack trace types of the sizes and
    region the command's selection options name, or an error saying why there are none.
    program_notes: a list that takes the "this program has no symbols" note, for a
    command that says it in its own output (else it goes to stderr with the others)."""
    sizes = SizeSet(args.size)
    profiles = read_profiles(args.profiles, args)
    sym = symbolizer()
    stacks = weighted_stacks(profiles, sizes, args.region, symbolizer=sym)
    if program_notes is not None:
        program_notes.extend(sym.program_notes)
        notes(n for n in sym.notes if n not in sym.program_notes)
    else:
        notes(sym.notes)
    require_stacks(stacks, profiles, sizes, args.region)
    return profiles, sizes, stacks
