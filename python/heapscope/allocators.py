"""The allocators heapscope can run a program under, and where each one's library is.

glibc needs no preload; the peers come from Debian packages; hsmalloc is bundled.
"""
from pathlib import Path
from typing import Optional

from heapscope.errors import HeapscopeError

LIBDIRS = [Path("/usr/lib/x86_64-linux-gnu"), Path("/usr/lib64"), Path("/usr/lib"),
           Path("/usr/local/lib")]

# name -> (candidate library file names, Debian package that provides it)
PEERS = {
    "jemalloc": (["libjemalloc.so.2", "libjemalloc.so"], "libjemalloc2"),
    "tcmalloc": (["libtcmalloc_minimal.so.4", "libtcmalloc.so.4", "libtcmalloc_minimal.so"],
                 "libtcmalloc-minimal4"),
    "mimalloc": (["libmimalloc.so.2", "libmimalloc.so"], "libmimalloc2.0"),
}

ALL = ["glibc", "jemalloc", "tcmalloc", "mimalloc", "hsmalloc"]


def find_allocator(name: str) -> Optional[Path]:
    """Library to preload for `name`; None for glibc or when a peer is not installed."""
    if name == "glibc":
        return None
    if name == "hsmalloc":
        from heapscope.native import native_dir
        path = native_dir() / "lib" / "libhsmalloc.so"
        return path if path.exists() else None
    if name not in PEERS:
        raise HeapscopeError(f"unknown allocator '{name}' (choose from {', '.join(ALL)})")
    for directory in LIBDIRS:
        for filename in PEERS[name][0]:
            path = directory / filename
            if path.exists():
                return path
    return None


def require_allocator(name: str) -> Optional[Path]:
    """Like find_allocator, but a missing library is an error naming its package."""
    path = find_allocator(name)
    if path is None and name != "glibc":
        if name == "hsmalloc":
            raise HeapscopeError("libhsmalloc.so is not built: reinstall heapscope")
        raise HeapscopeError(
            f"{name} is not installed: apt-get install {PEERS[name][1]}")
    return path
