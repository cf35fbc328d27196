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
  mpi          an MpiFamily, parametrized: the test runs under Open MPI and under MPICH
               (both installed by scripts/setup.sh).

Helpers: require(*programs) fails a test whose tools are missing ("X is not installed:
run scripts/setup.sh"); a test never skips or passes for want of a tool.

The session starts from a known environment whatever the shell gave it (see
pytest_configure): default signal dispositions, no stray HEAPSCOPE_* settings, its own
symbol cache.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
PROGRAMS = TESTS / "programs"

# Signals a shell may leave ignored (SIGINT and SIGQUIT for a background job, SIGHUP
# under nohup); an ignored signal stays ignored across exec, so the programs the tests
# start would not die of it. Caught signals are reset to the default on exec.
_SIGNALS_TO_RESTORE = (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP, signal.SIGTERM,
                       signal.SIGUSR1, signal.SIGUSR2)
_KEPT_SETTINGS = {"HEAPSCOPE_NATIVE_DIR", "HEAPSCOPE_TEST_CACHE"}


def pytest_configure(config):
    for sig in _SIGNALS_TO_RESTORE:
        if signal.getsignal(sig) == signal.SIG_IGN:
            signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT
                          else signal.SIG_DFL)
    # a recorder setting exported in the shell (HEAPSCOPE_SIZES ...) would change what
    # every recording holds; symbols are cached per session, not in the user's home
    for name in [n for n in os.environ if n.startswith("HEAPSCOPE_")]:
        if name not in _KEPT_SETTINGS:
            del os.environ[name]
    config._heapscope_cache = tempfile.mkdtemp(prefix="heapscope-test-cache-")
    os.environ["HEAPSCOPE_CACHE_DIR"] = config._heapscope_cache


def pytest_unconfigure(config):
    cache = getattr(config, "_heapscope_cache", None)
    if cache:
        shutil.rmtree(cache, ignore_errors=True)


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
    from heapscope.allocators import find_allocator
    return find_allocator(name)


def require(*programs):
    """Fail the test (never skip it) unless every program is on PATH: scripts/setup.sh
    installs every tool the suite calls. Returns the path of the first."""
    paths = [shutil.which(program) for program in programs]
    for program, path in zip(programs, paths):
        if path is None:
            pytest.fail(f"{program} is not installed: run scripts/setup.sh", pytrace=False)
    return paths[0]


@dataclass(frozen=True)
class MpiFamily:
    """How to build and launch an MPI program of one MPI family, and the layer
    `heapscope record` preloads for it. Debian's plain mpicc/mpirun are Open MPI's
    (scripts/setup.sh keeps the alternatives there); MPICH's have a .mpich suffix."""
    name: str
    cc: str
    fc: str
    run: tuple        # the launcher and the options it needs here (root, 2 cores)
    layer: str

    def mpirun(self, n):
        return [*self.run, "-np", str(n)]

    def compile(self, source, out, *flags, fortran=False):
        compiler = self.fc if fortran else self.cc
        require(compiler)
        subprocess.run([compiler, "-g", *flags, "-o", str(out), str(PROGRAMS / source)],
                       check=True)
        return out


MPI_FAMILIES = {
    # Open MPI refuses root without --allow-run-as-root, more ranks than cores without
    # --oversubscribe; MPICH's hydra needs neither
    "openmpi": MpiFamily("openmpi", "mpicc", "mpif90",
                         ("mpirun", "--oversubscribe", "--allow-run-as-root"),
                         "libheapscope_mpi.so"),
    "mpich": MpiFamily("mpich", "mpicc.mpich", "mpif90.mpich", ("mpirun.mpich",),
                       "libheapscope_mpich.so"),
}


def record_killed_rank_job(tmp, mode, *options, env=None, timeout=180):
    """tests/programs/mpi_job_ranks.c (its `mode` kills rank 2) built with Open MPI in
    tmp and run on 4 ranks under `heapscope record --mpi *options -o tmp/out`; mpirun
    reports the killed rank. Returns (program, out, the finished process)."""
    openmpi = MPI_FAMILIES["openmpi"]
    program = openmpi.compile("mpi_job_ranks.c", tmp / "mpi_job_ranks")
    out = tmp / "out"
    res = subprocess.run([sys.executable, "-m", "heapscope", "record", "--mpi", *options,
                          "-o", out, "--", *openmpi.mpirun(4), program, mode],
                         capture_output=True, text=True, timeout=timeout,
                         env=dict(os.environ, **(env or {})))
    assert res.returncode != 0, res.stderr   # mpirun reports the killed rank
    return program, out, res


@pytest.fixture(params=list(MPI_FAMILIES))
def mpi(request):
    return MPI_FAMILIES[request.param]
