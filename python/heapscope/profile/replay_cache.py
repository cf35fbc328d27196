"""The event trace's replay kept beside its profile, so that the second tracking report
of a trace profile does not replay it again.

    rows = load(path, bounds)            # None: no cache, or not this file's
    store(path, bounds, rows, figures)

The cache is `.NAME.replay` beside `NAME.hsp` (hidden: `report DIR` lists *.hsp only),
JSON, valid for one file identity: its size, mtime (ns) and inode, and the temporary
bounds replayed with. A profile that changes (re-recorded, copied over) gets a new
identity, so the old cache is ignored and replaced. A directory that cannot be written
means no cache, never an error; HEAPSCOPE_REPLAY_CACHE=0 turns it off.
"""
import json
import os
from typing import List, Optional, Tuple

VERSION = 1


def _where(path: str) -> str:
    head, name = os.path.split(path)
    return os.path.join(head, f".{name[:-4] if name.endswith('.hsp') else name}.replay")


def _identity(path: str) -> Optional[list]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def enabled() -> bool:
    return os.environ.get("HEAPSCOPE_REPLAY_CACHE", "1") != "0"


def load(path: str, bounds: Tuple[int, int]) -> Optional[Tuple[List[tuple], tuple, dict]]:
    """(groups, figures, stacks) as replay_native.replay_chunks gives them, when the
    cache is this file's and these bounds'."""
    if not enabled():
        return None
    try:
        with open(_where(path)) as fh:
            doc = json.load(fh)
        if doc.get("version") != VERSION or doc.get("identity") != _identity(path) \
                or doc.get("bounds") != list(bounds):
            return None
        groups = [(g[0], g[1], g[2], g[3][:6] + [tuple(g[3][6]), tuple(g[3][7])])
                  for g in doc["groups"]]
        stacks = {int(sid): (s[0], s[1], tuple(s[2])) for sid, s in doc["stacks"].items()}
        return groups, tuple(doc["figures"]), stacks
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None          # no cache, or a damaged one: replay


def store(path: str, bounds: Tuple[int, int], groups: List[tuple], figures: tuple,
          stacks: dict) -> None:
    """Write the cache (atomically: a temporary file renamed); silently nothing when the
    directory cannot be written."""
    identity = _identity(path)
    if not enabled() or identity is None:
        return
    where = _where(path)
    doc = dict(version=VERSION, identity=identity, bounds=list(bounds), figures=list(figures),
               groups=[[g[0], g[1], g[2], list(g[3][:6]) + [list(g[3][6]), list(g[3][7])]]
                       for g in groups],
               stacks={str(sid): [s[0], s[1], list(s[2])] for sid, s in stacks.items()})
    tmp = f"{where}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w") as fh:
            json.dump(doc, fh, separators=(",", ":"))
        os.replace(tmp, where)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
