"""Reading profiles for a command, and the lines that go to stderr on the way.

    profiles = read_profiles(args.profiles)     # the reader's warnings printed, one line each
    notes(sym.notes)                            # "heapscope: note: ..." per symbolizer note
    warnings([...])                             # "heapscope: warning: ..." per line

Analysis hands these lines back as data (analysis/loading.py); only a command prints.
"""
import sys
from typing import Iterable, List, Sequence

from heapscope.analysis.loading import read, reader_warnings
from heapscope.profile.model import Profile


def read_profiles(paths: Sequence[str]) -> List[Profile]:
    profiles = read(paths)
    for line in reader_warnings(profiles):
        print(f"heapscope: {line}", file=sys.stderr)
    return profiles


def notes(lines: Iterable[str]) -> None:
    for line in lines:
        print(f"heapscope: note: {line}", file=sys.stderr)


def warnings(lines: Iterable[str]) -> None:
    for line in lines:
        if line:
            print(f"heapscope: warning: {line}", file=sys.stderr)
