"""Where the native parts (libraries, helper programs, headers, workload sources) live.

Installed: inside the package, heapscope/native/{lib,bin,include,share}.
From a build tree: set HEAPSCOPE_NATIVE_DIR=<cmake build dir>/native.
"""
import os

from heapscope.errors import HeapscopeError


def native_path() -> str:
    """The native directory, as a string (`record` starts without pathlib: start-up)."""
    env = os.environ.get("HEAPSCOPE_NATIVE_DIR")
    if env:
        return os.path.realpath(env)
    return os.path.join(os.path.dirname(os.path.realpath(__file__)), "native")


def library_path(name: str) -> str:
    """Path of a bundled shared library, e.g. library_path("heapscope") ->
    .../libheapscope.so."""
    path = os.path.join(native_path(), "lib", f"lib{name}.so")
    if not os.path.exists(path):
        raise HeapscopeError(
            f"native library {path} is missing: reinstall heapscope (pip install .) "
            f"or set HEAPSCOPE_NATIVE_DIR to a build tree's native/ directory")
    return path


def native_dir() -> "Path":
    from pathlib import Path
    return Path(native_path())


def library(name: str) -> "Path":
    from pathlib import Path
    return Path(library_path(name))


def program(name: str) -> "Path":
    """Path of a bundled helper program or workload binary."""
    path = native_dir() / "bin" / name
    if not path.exists():
        raise HeapscopeError(f"bundled program {path} is missing: reinstall heapscope")
    return path


def include_dir() -> "Path":
    return native_dir() / "include"


def share_dir() -> "Path":
    """Bundled sources (workloads, demo) that heapscope compiles at run time."""
    return native_dir() / "share"
