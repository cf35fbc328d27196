"""Which MPI layer `heapscope record` preloads: Open MPI's or MPICH's.

The two MPI families have different ABIs (MPI_Comm is a pointer in Open MPI, an int in
MPICH), so each has its own layer, built from its own mpi.h and linked to its library:

    openmpi  libheapscope_mpi.so    programs linking libmpi.so.40 (Open MPI 3, 4, 5)
    mpich    libheapscope_mpich.so  programs linking libmpich.so, or libmpi.so.12 (the
                                    MPICH ABI: upstream MPICH, Intel MPI, MVAPICH)

The layer must match the MPI the ranks run with. Without --mpi, `record` lets the
recorder choose per exec'd program (HEAPSCOPE_MPI=auto, src/recorder/core/exec_env.c):
each program that links an MPI gets its layer, launchers and daemons (mpirun, orted,
hydra_pmi_proxy, srun) and other programs get none; the command itself, started by
record, gets the layer of the MPI it links (a singleton MPI program). With --mpi, one
layer is preloaded into every process of the command line, as chosen here.
"""
import os
import re
import struct

from heapscope.errors import HeapscopeError
from heapscope.launch import which
from heapscope.native import native_path

LAYERS = {"openmpi": "heapscope_mpi", "mpich": "heapscope_mpich"}
NAMES = {"openmpi": "Open MPI", "mpich": "MPICH"}
CHOICES = ("auto", *LAYERS)

_MPICH_LIB = re.compile(r"^\s*(libmpich\.so|libmpi\.so\.12\b)", re.M)
_OPENMPI_LIB = re.compile(r"^\s*libmpi\.so\b", re.M)
_MPICH_LAUNCHER = re.compile(r"mpich|hydra")
# the launchers `record` recognizes as starting MPI jobs (their real names too)
LAUNCHERS = re.compile(r"^(mpirun|mpiexec|orterun|prterun|prun|srun|mpiexec\.hydra)(\.\w+)?$")


def layer_path(mpi):
    return os.path.join(native_path(), "lib", f"lib{LAYERS[mpi]}.so")


_ELF64_LE = b"\x7fELF\x02\x01"
PT_INTERP = 3


def _interpreter(path):
    """The program interpreter (the dynamic loader) a 64-bit little-endian ELF names in
    its PT_INTERP header, or None: another file, or a static program."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
            if len(head) < 64 or head[:6] != _ELF64_LE:
                return None
            phoff, = struct.unpack_from("<Q", head, 0x20)
            phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
            fh.seek(phoff)
            table = fh.read(phentsize * phnum)
            for i in range(phnum):
                kind, = struct.unpack_from("<I", table, i * phentsize)
                if kind == PT_INTERP:
                    offset, _, _, size = struct.unpack_from("<QQQQ", table, i * phentsize + 8)
                    fh.seek(offset)
                    return os.fsdecode(fh.read(size).rstrip(b"\0")) or None
    except (OSError, struct.error):
        return None
    return None


def _ldd(path):
    """The libraries the program loads, as ldd lists them: its own dynamic loader asked
    directly (`ld.so --list`, what ldd runs; without ldd's shell, and without importing
    subprocess: both cost `record` start-up time). "" when it cannot say."""
    loader = _interpreter(path)
    if loader is None or not os.access(loader, os.X_OK):
        return ""
    read, write = os.pipe()
    try:
        pid = os.posix_spawn(loader, [loader, "--list", path], os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, write, 1), (os.POSIX_SPAWN_CLOSE, read),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    except OSError:
        os.close(read)
        return ""
    finally:
        os.close(write)
    with os.fdopen(read, "rb") as out:
        text = out.read()
    os.waitpid(pid, 0)
    return text.decode(errors="replace")


def _executable(word):
    path = which(word)
    return path if path and os.path.isfile(path) else None


def linked_mpi(program):
    """'openmpi' or 'mpich' when the program is dynamically linked to that MPI, else None."""
    path = _executable(program)
    if path is None:
        return None
    libs = _ldd(path)
    if _MPICH_LIB.search(libs):
        return "mpich"
    if _OPENMPI_LIB.search(libs):
        return "openmpi"
    return None


def launcher_mpi(program):
    """'mpich' when the launcher is MPICH's (its name or real name says mpich or hydra:
    mpirun.mpich and mpiexec.mpich -> mpiexec.hydra, also a plain mpirun when Debian's
    alternatives point at MPICH), else None (Open MPI's orterun, srun, a script)."""
    path = _executable(program)
    if path is None:
        return None
    names = f"{os.path.basename(program)} {os.path.basename(os.path.realpath(path))}"
    return "mpich" if _MPICH_LAUNCHER.search(names) else None


def is_launcher(program):
    """mpirun, mpiexec, srun, orterun, prterun, mpiexec.hydra (and Debian's
    mpirun.openmpi, mpirun.mpich ...), by its name or the name it links to."""
    path = _executable(program)
    names = {os.path.basename(program)} | ({os.path.basename(os.path.realpath(path))} if path else set())
    return any(LAUNCHERS.match(n) for n in names)


def detect(command):
    """The MPI of a command line: the program's own MPI; else, for a launcher
    (`mpirun -np 4 ./app`), the MPI of the first word after it that is a program
    linking an MPI; else the launcher's family; else None."""
    mpi = linked_mpi(command[0])
    for word in command[1:]:
        if mpi:
            break
        if not word.startswith("-"):
            mpi = linked_mpi(word)
    return mpi or launcher_mpi(command[0])


def per_exec_mode(requested):
    """HEAPSCOPE_MPI for the recorder: "auto" without --mpi (each exec'd program gets the
    layer of the MPI it links), None with --mpi (one layer preloaded into everything)."""
    return "auto" if requested is None else None


def choose(requested, command):
    """The layer library to preload into the command (a path) or None.

    requested: None (no --mpi: a layer only when the program itself links an MPI whose
    layer was built; the programs it execs get theirs from the recorder), 'auto' (--mpi:
    detected, Open MPI when nothing tells), 'openmpi'
    or 'mpich' (--mpi=NAME). A layer asked for but not built is an error."""
    if requested is None:
        mpi = linked_mpi(command[0])
        return layer_path(mpi) if mpi and os.path.exists(layer_path(mpi)) else None
    mpi = requested if requested != "auto" else (detect(command) or "openmpi")
    path = layer_path(mpi)
    if not os.path.exists(path):
        how = "apt-get install libmpich-dev" if mpi == "mpich" else \
            "apt-get install libopenmpi-dev"
        raise HeapscopeError(f"the {NAMES[mpi]} layer {os.path.basename(path)} is not built (no {NAMES[mpi]} "
                             f"was found when heapscope was built: {how}, then rebuild)")
    return path
