"""Reader of hsmalloc's event trace (HSMALLOC_TRACE=FILE, src/allocator/trace.c): a header
line `# hsmalloc trace pid P: t_us event heap addr bytes`, then one line per event of the
allocator's internals (segments, pages, purges, mappings, pressure levels). Returned as
numpy columns; a line that is not an event is a one-line HeapscopeError, except a last
line cut short (the program killed while writing), which is dropped and said."""
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from heapscope.errors import HeapscopeError
from heapscope.profile.framing import open_regular

HEADER = "# hsmalloc trace pid "
# The event names, in the allocator's order (trace.c's names[]); a kind is an index here.
KINDS = ("seg_new", "seg_reuse", "seg_free", "page_new", "page_free", "purge", "map", "unmap",
         "pressure")
_KIND = {name: i for i, name in enumerate(KINDS)}


@dataclass
class Trace:
    path: str
    pid: int
    t_us: np.ndarray     # int64, microseconds since the first event
    kind: np.ndarray     # int8, index into KINDS
    heap: np.ndarray     # int32, the heap's id, -1 for process-wide events ("-")
    value: np.ndarray    # int64: the address, or for "pressure" the level (0-3)
    bytes: np.ndarray    # int64: bytes, or for "pressure" the headroom in per mille
    cut_line: Optional[int] = None  # the number of a last line cut short and dropped


def is_trace(path: str) -> bool:
    """Whether `path` starts like an event trace (the alloc-stats command's choice)."""
    try:
        with open_regular(path, "a trace") as f:
            return f.read(len(HEADER)) == HEADER.encode()
    except (OSError, HeapscopeError):
        return False


def _event(line: str):
    parts = line.split()
    if len(parts) != 5 or parts[1] not in _KIND:
        raise ValueError
    kind = _KIND[parts[1]]
    heap = -1 if parts[2] == "-" else int(parts[2])
    if kind == _KIND["pressure"]:
        value = int(parts[3])
    else:
        value = 0 if parts[3] == "(nil)" else int(parts[3], 16)
    return int(parts[0]), kind, heap, value, int(parts[4])


def read_trace(path: str) -> Trace:
    p = Path(path)
    if not p.exists():
        raise HeapscopeError(f"{path}: no such file")
    if p.is_dir():
        raise HeapscopeError(f"{path}: a directory, not an hsmalloc event trace")
    try:
        with open_regular(str(path), "an hsmalloc event trace") as fh:
            text = fh.read().decode("utf-8", errors="replace")
    except OSError as exc:
        raise HeapscopeError(f"{path}: cannot be read: {exc.strerror}") from None
    lines = text.split("\n")
    if not lines[0].startswith(HEADER):
        raise HeapscopeError(f"{path}:1: not an hsmalloc event trace (no '{HEADER.strip()}' header)")
    try:
        pid = int(lines[0][len(HEADER):].split(":")[0])
    except ValueError:
        raise HeapscopeError(f"{path}:1: the trace's header names no process id") from None
    ends_cleanly = text.endswith("\n")
    body = lines[1:-1] if ends_cleanly else lines[1:]
    rows, cut = [], None
    for number, line in enumerate(body, 2):
        try:
            rows.append(_event(line))
        except ValueError:
            if number == len(body) + 1 and not ends_cleanly:
                cut = number  # written up to the kill: the complete events before it stand
                break
            raise HeapscopeError(f"{path}:{number}: not an event line "
                                 f"(t_us event heap addr bytes): {line[:60]!r}") from None
    cols = np.array(rows, dtype=np.int64).reshape(-1, 5) if rows else np.zeros((0, 5), np.int64)
    if len(cols) > 1 and np.any(np.diff(cols[:, 0]) < 0):
        raise HeapscopeError(f"{path}: event times go back (not one process's trace)")
    return Trace(path=path, pid=pid, t_us=cols[:, 0], kind=cols[:, 1].astype(np.int8),
                 heap=cols[:, 2].astype(np.int32), value=cols[:, 3], bytes=cols[:, 4], cut_line=cut)
