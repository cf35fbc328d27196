"""The allocators heapscope can run a program under, and where each one's library is.

glibc needs no preload; the peers come from Debian packages; hsmalloc is bundled.
"""
from __future__ import annotations

import os

from heapscope.errors import HeapscopeError

TYPE_CHECKING = False
if TYPE_CHECKING:   # annotations only (typing costs `record` start-up time)
    from typing import Optional

LIBDIRS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib"]

# name -> (candidate library file names, Debian package that provides it)
PEERS = {
    "jemalloc": (["libjemalloc.so.2", "libjemalloc.so"], "libjemalloc2"),
    "tcmalloc": (["libtcmalloc_minimal.so.4", "libtcmalloc.so.4", "libtcmalloc_minimal.so"],
                 "libtcmalloc-minimal4"),
    "mimalloc": (["libmimalloc.so.2", "libmimalloc.so"], "libmimalloc2.0"),
}

ALL = ["glibc", "jemalloc", "tcmalloc", "mimalloc", "hsmalloc"]


def find_allocator(name: str) -> Optional[str]:
    """Library to preload for `name` (a path); None for glibc or when a peer is not
    installed."""
    if name == "glibc":
        return None
    if name == "hsmalloc":
        from heapscope.native import native_path
        path = os.path.join(native_path(), "lib", "libhsmalloc.so")
        return path if os.path.exists(path) else None
    if name not in PEERS:
        raise HeapscopeError(f"unknown allocator '{name}' (choose from {', '.join(ALL)})")
    for directory in LIBDIRS:
        for filename in PEERS[name][0]:
            path = os.path.join(directory, filename)
            if os.path.exists(path):
                return path
    return None


def require_allocator(name: str) -> Optional[str]:
    """Like find_allocator, but a missing library is an error naming its package."""
    path = find_allocator(name)
    if path is None and name != "glibc":
        if name == "hsmalloc":
            raise HeapscopeError("libhsmalloc.so is not built: reinstall heapscope")
        raise HeapscopeError(
            f"{name} is not installed: apt-get install {PEERS[name][1]}")
    return path
