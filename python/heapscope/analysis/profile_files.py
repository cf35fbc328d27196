"""Which profile files a list of FILE|DIR arguments names: the files as given, a
directory's *.hsp files sorted, each file once (by its real path)."""
import os
from pathlib import Path
from typing import Iterable, List

from heapscope.errors import HeapscopeError
from heapscope.profile import PROFILE_SUFFIX


def profile_files(paths: Iterable) -> List[str]:
    """The files named, and the *.hsp files of the directories named (sorted), once each."""
    files: List[str] = []
    for arg in map(str, paths):
        if os.path.isdir(arg):
            found = sorted(str(p) for p in Path(arg).glob("*" + PROFILE_SUFFIX) if p.is_file())
            if not found:
                raise HeapscopeError(f"{arg}: directory holds no profile (*{PROFILE_SUFFIX}) files")
            files.extend(found)
        else:
            files.append(arg)
    if not files:
        raise HeapscopeError("no profile given")
    unique = {}
    for f in files:
        unique.setdefault(os.path.realpath(f), f)
    return list(unique.values())
