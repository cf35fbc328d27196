"""Reader of hsmalloc's statistics dumps: the JSON objects HSMALLOC_STATS=json writes at
exit and on SIGUSR2, one per line, appended to HSMALLOC_STATS_FILE (several processes
and several dumps per process may share a file). Each object is returned as written,
with the line it came from. HSMALLOC_STATS_FILE's default is stderr, which the program
writes too (octave's exit message, MPI warnings): a line that does not start with "{"
is the program's and is skipped; hsmalloc's text report, a line starting with "{" that
is not a whole hsmalloc object (a dump cut short) and a file without one object are a
one-line HeapscopeError."""
import json
from pathlib import Path
from typing import Dict, List

from heapscope.errors import HeapscopeError
from heapscope.profile.framing import open_regular


def read_stats(path: str) -> List[Dict]:
    """The statistics objects of `path`, in file order."""
    p = Path(path)
    if not p.exists():
        raise HeapscopeError(f"{path}: no such file")
    if p.is_dir():
        raise HeapscopeError(f"{path}: a directory, not an hsmalloc statistics file "
                             f"(HSMALLOC_STATS=json HSMALLOC_STATS_FILE=FILE writes one)")
    try:
        with open_regular(str(path), "an hsmalloc statistics file") as fh:
            text = fh.read().decode("utf-8", errors="replace")
    except OSError as exc:
        raise HeapscopeError(f"{path}: cannot be read: {exc.strerror}") from None
    snapshots = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("hsmalloc statistics"):  # the text report's first line
            raise HeapscopeError(f"{path}:{number}: hsmalloc's text report, not its JSON: "
                                 f"run with HSMALLOC_STATS=json")
        if not line.startswith("{"):
            continue  # the program's own output on the shared stderr
        try:
            obj = json.loads(line)
        except ValueError:
            raise HeapscopeError(f"{path}:{number}: not a complete JSON object (a dump cut "
                                 f"short, or not an hsmalloc statistics file)") from None
        if not isinstance(obj, dict) or obj.get("allocator") != "hsmalloc" or "pid" not in obj:
            raise HeapscopeError(f"{path}:{number}: not an hsmalloc statistics object "
                                 f"(no \"allocator\": \"hsmalloc\" and \"pid\")")
        obj["line"] = number
        snapshots.append(obj)
    if not snapshots:
        what = "no line of it is a dump" if text.strip() else "empty"
        raise HeapscopeError(f"{path}: holds no hsmalloc statistics ({what})")
    return snapshots
