"""Reader of hsmalloc's statistics dumps: the JSON objects HSMALLOC_STATS=json writes at
exit and on SIGUSR2, one per line, appended to HSMALLOC_STATS_FILE (several processes
and several dumps per process may share a file). Each object is returned as written,
with the line it came from; anything else is a one-line HeapscopeError."""
import json
from pathlib import Path
from typing import Dict, List

from heapscope.errors import HeapscopeError


def read_stats(path: str) -> List[Dict]:
    """The statistics objects of `path`, in file order."""
    p = Path(path)
    if not p.exists():
        raise HeapscopeError(f"{path}: no such file")
    if p.is_dir():
        raise HeapscopeError(f"{path}: a directory, not an hsmalloc statistics file "
                             f"(HSMALLOC_STATS=json HSMALLOC_STATS_FILE=FILE writes one)")
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise HeapscopeError(f"{path}: cannot be read: {exc.strerror}") from None
    snapshots = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("hsmalloc statistics") or line.startswith("  "):
            raise HeapscopeError(f"{path}:{number}: hsmalloc's text report, not its JSON: "
                                 f"run with HSMALLOC_STATS=json")
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
        raise HeapscopeError(f"{path}: holds no hsmalloc statistics (empty)")
    return snapshots
