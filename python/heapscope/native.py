"""Where the native parts (libraries, helper programs, headers, workload sources) live.

Installed: inside the package, heapscope/native/{lib,bin,include,share}.
From a build tree: set HEAPSCOPE_NATIVE_DIR=<cmake build dir>/native.
"""
import os
from pathlib import Path

from heapscope.errors import HeapscopeError


def native_dir() -> Path:
    env = os.environ.get("HEAPSCOPE_NATIVE_DIR")
    if env:
        return Path(env).resolve()
    return Path(__file__).resolve().parent / "native"


def library(name: str) -> Path:
    """Path of a bundled shared library, e.g. library("heapscope") -> .../libheapscope.so."""
    path = native_dir() / "lib" / f"lib{name}.so"
    if not path.exists():
        raise HeapscopeError(
            f"native library {path} is missing: reinstall heapscope (pip install .) "
            f"or set HEAPSCOPE_NATIVE_DIR to a build tree's native/ directory")
    return path


def program(name: str) -> Path:
    """Path of a bundled helper program or workload binary."""
    path = native_dir() / "bin" / name
    if not path.exists():
        raise HeapscopeError(f"bundled program {path} is missing: reinstall heapscope")
    return path


def include_dir() -> Path:
    return native_dir() / "include"


def share_dir() -> Path:
    """Bundled sources (workloads, demo) that heapscope compiles at run time."""
    return native_dir() / "share"
