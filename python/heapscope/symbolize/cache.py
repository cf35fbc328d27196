"""On-disk cache of symbolized offsets, one JSON file per module identity.

Identity: the build-id when the module has one, else path + mtime + size; plus
whether debug info was found. Location:
$HEAPSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/heapscope, else ~/.cache/heapscope;
files under symbols/. It persists across runs and is never pruned by heapscope
(delete the directory to reclaim the space; it is rebuilt as needed).

Besides saving time, it keeps a build readable after it is gone: `heapscope record`
symbolizes the stacks it recorded as it ends (symbolize.warm), and the Symbolizer
asks the cache by build-id before it looks at the binary on disk, so a program
rebuilt in place still has its old frames named. A cache that cannot be read or
written is ignored (store() says so): it never fails a report. Writers take a lock
(symbols/.lock), so several processes adding to one build's file lose nothing.
"""
import fcntl
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

CACHE_VERSION = 1


def cache_dir() -> Path:
    env = os.environ.get("HEAPSCOPE_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "heapscope"


def module_key(binary: str, build_id: str, has_debug: bool) -> Optional[str]:
    """Cache file name of a module. Whether debug info was found is part of it: a
    stripped binary and its -dbgsym package share a build-id, not their answers."""
    kind = "dbg" if has_debug else "sym"
    if build_id:
        return build_id_key(build_id, has_debug)
    try:
        st = os.stat(binary)
    except OSError:
        return None
    digest = hashlib.sha1(binary.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return f"path-{digest}-{st.st_mtime_ns}-{st.st_size}-{kind}"


def build_id_key(build_id: str, has_debug: bool) -> str:
    """Cache file name of a module with a build-id, whether or not its binary is here."""
    return f"bid-{build_id}-{'dbg' if has_debug else 'sym'}"


class SymbolCache:
    def __init__(self, root: Optional[Path] = None, enabled: bool = True):
        self.root = (root or cache_dir()) / "symbols"
        self.enabled = enabled

    def load(self, key: str) -> Dict[int, List[list]]:
        if not self.enabled:
            return {}
        try:
            with open(self.root / f"{key}.json", encoding="utf-8") as fh:
                data = json.load(fh)
            if data.get("version") != CACHE_VERSION:
                return {}
            return {int(off, 16): entries for off, entries in data["frames"].items()}
        except (OSError, ValueError, KeyError, AttributeError, TypeError):
            return {}

    def store(self, key: str, frames: Dict[int, List[list]]) -> bool:
        """Add `frames` to the module's file; False when the cache could not be written."""
        if not self.enabled or not frames:
            return True
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            with open(self.root / ".lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)   # load-merge-replace by one writer at a time
                merged = self.load(key)
                merged.update(frames)
                body = {"version": CACHE_VERSION,
                        "frames": {f"{off:#x}": entries for off, entries in merged.items()}}
                fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{key}.", suffix=".tmp")
                try:
                    with os.fdopen(fd, "w", encoding="utf-8") as fh:
                        json.dump(body, fh, separators=(",", ":"))
                    os.replace(tmp, self.root / f"{key}.json")
                except BaseException:
                    os.unlink(tmp)
                    raise
            return True
        except OSError:
            return False
