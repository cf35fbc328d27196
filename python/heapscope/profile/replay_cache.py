"""The event trace's replay kept for the next report, so that the second tracking report
of a trace profile does not replay it again.

    key = content_key(path, bounds)      # None: no caching (off, or unreadable)
    rows = load(path, key)               # None: no cache, or not this content's
    store(path, key, rows, figures, stacks)

A cache is valid for one content: the key is a digest of the file's header and of every
chunk's type, crc and length (the crcs cover the payloads), and of the temporary bounds
replayed with. A file changed in place, even to the same size and mtime, has another key;
the same bytes copied elsewhere keep theirs. Reading the key walks the chunk headers only.

Where: the cache directory (`$HEAPSCOPE_CACHE_DIR`, else `$XDG_CACHE_HOME/heapscope`,
else `~/.cache/heapscope`; the symbol cache's), `replay/KEY.json`, the
REPLAY_KEPT most recently used kept; nothing is written beside a profile unless
`HEAPSCOPE_REPLAY_CACHE=beside` asks for it (`.NAME.replay`, hidden: `report DIR` lists
*.hsp only). `HEAPSCOPE_REPLAY_CACHE=0` turns it off. A cache that cannot be written is
no cache, never an error.
"""
import hashlib
import json
import os
from typing import List, Optional, Tuple

from heapscope.errors import HeapscopeError
from heapscope.profile import framing

VERSION = 2
REPLAY_KEPT = 64          # replays kept in the cache directory, the most recently used


def _mode() -> str:
    """"0" (off), "beside" (next to the profile) or "dir" (the cache directory)."""
    value = os.environ.get("HEAPSCOPE_REPLAY_CACHE", "")
    return "0" if value == "0" else "beside" if value == "beside" else "dir"


def enabled() -> bool:
    return _mode() != "0"


def _cache_dir() -> str:
    from heapscope.symbolize.cache import cache_dir
    return os.path.join(str(cache_dir()), "replay")


def _where(path: str, key: str) -> str:
    if _mode() == "beside":
        head, name = os.path.split(path)
        return os.path.join(head, f".{name[:-4] if name.endswith('.hsp') else name}.replay")
    return os.path.join(_cache_dir(), f"{key}.json")


def content_key(path: str, bounds: Tuple[int, int]) -> Optional[str]:
    """The digest of the file's header, its chunks' types, crcs and lengths, and the
    bounds; None when caching is off or the file cannot be read."""
    if not enabled():
        return None
    digest = hashlib.blake2b(digest_size=20)
    digest.update(f"{VERSION} {bounds[0]} {bounds[1]}".encode())
    try:
        with framing.open_regular(path) as fh:
            header = framing.check_header(fh.read(framing.fmt.HEADER_SIZE), path,
                                          os.fstat(fh.fileno()).st_size)
            fh.seek(0)
            digest.update(fh.read(header.header_size))
            for head in framing.scan(fh, path):
                digest.update(b"%d %d %d;" % (head.type, head.crc, head.length))
    except (OSError, HeapscopeError):
        return None
    return digest.hexdigest()


def load(path: str, key: Optional[str]) -> Optional[Tuple[List[tuple], tuple, dict]]:
    """(groups, figures, stacks) as replay_native.replay_chunks gives them, when a cache
    of this content (key) is kept."""
    if key is None:
        return None
    where = _where(path, key)
    try:
        with open(where) as fh:
            doc = json.load(fh)
        if doc.get("version") != VERSION or doc.get("key") != key:
            return None
        groups = [(g[0], g[1], g[2], g[3][:6] + [tuple(g[3][6]), tuple(g[3][7])])
                  for g in doc["groups"]]
        stacks = {int(sid): (s[0], s[1], tuple(s[2])) for sid, s in doc["stacks"].items()}
        result = groups, tuple(doc["figures"]), stacks
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None          # no cache, or a damaged one: replay
    try:
        os.utime(where)      # (recently used: kept longer)
    except OSError:
        pass
    return result


def store(path: str, key: Optional[str], groups: List[tuple], figures: tuple, stacks: dict) -> None:
    """Write the cache (atomically: a temporary file renamed); silently nothing when it
    cannot be written."""
    if key is None:
        return
    where = _where(path, key)
    doc = dict(version=VERSION, key=key, figures=list(figures),
               groups=[[g[0], g[1], g[2], list(g[3][:6]) + [list(g[3][6]), list(g[3][7])]]
                       for g in groups],
               stacks={str(sid): [s[0], s[1], list(s[2])] for sid, s in stacks.items()})
    tmp = f"{where}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(where) or ".", exist_ok=True)
        with open(tmp, "w") as fh:
            json.dump(doc, fh, separators=(",", ":"))
        os.replace(tmp, where)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return
    if _mode() == "dir":
        _prune(os.path.dirname(where))


def _prune(folder: str) -> None:
    """The REPLAY_KEPT most recently used replays stay; older ones go."""
    try:
        entries = [e for e in os.scandir(folder) if e.name.endswith(".json")]
        if len(entries) <= REPLAY_KEPT:
            return
        entries.sort(key=lambda e: e.stat().st_mtime_ns, reverse=True)
        for e in entries[REPLAY_KEPT:]:
            os.unlink(e.path)
    except OSError:
        pass
