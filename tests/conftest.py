"""Shared test fixtures.

The suite runs against the installed package (`pip install .`), or against a source
checkout with PYTHONPATH=python and HEAPSCOPE_NATIVE_DIR=<build>/native.

Fixtures:
  native       Path of the native dir (lib/, bin/, include/).
  build        build(source, *flags, cxx=False, name=None) -> Path of an executable,
               compiled with -g -O0 from tests/programs/<source>, cached per session.
               (compile_program(native, source, out, *flags) compiles to a chosen path,
               uncached: for tests that rebuild a program in place.)
  heapscope    heapscope(*args, check=True, env=None, cwd=None) -> CompletedProcess
               running `python3 -m heapscope` (text output captured).
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
PROGRAMS = TESTS / "programs"


@pytest.fixture(scope="session")
def native():
    from heapscope.native import native_dir
    path = native_dir()
    assert (path / "lib").is_dir(), f"no native build at {path}"
    return path


@pytest.fixture(scope="session")
def _build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("programs")


@pytest.fixture(scope="session")
def build(native, _build_dir):
    cache = {}

    def _build(source, *flags, cxx=None, name=None):
        src = PROGRAMS / source
        if cxx is None:
            cxx = src.suffix in (".cc", ".cpp", ".cxx")
        key = (source, flags, cxx, name)
        if key in cache:
            return cache[key]
        out = _build_dir / (name or (src.stem + ("-" + "-".join(f.strip("-") for f in flags) if flags else "")))
        cache[key] = compile_program(native, source, out, *flags, cxx=cxx)
        return out

    return _build


def compile_program(native, source, out, *flags, cxx=False):
    """Compile tests/programs/<source> into `out` (-g -O0, frame pointers, heapscope.h on
    the include path), replacing any file there; returns `out`."""
    compiler = "g++" if cxx else "gcc"
    cmd = [compiler, "-g", "-O0", "-fno-omit-frame-pointer", "-I", str(native / "include"),
           "-o", str(out), str(PROGRAMS / source), *flags]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, f"compile failed: {' '.join(cmd)}\n{res.stderr}"
    return Path(out)


@pytest.fixture(scope="session")
def heapscope():
    def _run(*args, check=True, env=None, cwd=None, timeout=300, input=None):
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        cmd = [sys.executable, "-m", "heapscope", *map(str, args)]
        res = subprocess.run(cmd, capture_output=True, text=True, env=full_env, cwd=cwd,
                             timeout=timeout, input=input)
        if check and res.returncode != 0:
            raise AssertionError(
                f"{' '.join(cmd)} exited {res.returncode}\nstdout:\n{res.stdout}\nstderr:\n{res.stderr}")
        return res

    return _run


def peer_allocator(name):
    """Path of a Debian-packaged peer allocator library, or None."""
    from heapscope.allocators import find_allocator  # provided by the allocator issue
    return find_allocator(name)


def have(program):
    return shutil.which(program) is not None
