"""Which MPI layer `heapscope record` preloads (python/heapscope/mpi_layer.py): the one of
the program's MPI (Open MPI: libheapscope_mpi.so, MPICH: libheapscope_mpich.so), of the
program a launcher starts, of an MPICH launcher, or the one named by --mpi=NAME; a
layer asked for but not built is a one-line error."""
import os

import pytest

from heapscope import mpi_layer
from heapscope.profile import read_profile

from conftest import MPI_FAMILIES


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """mpi_trivial.c built with each family's mpicc: {family name: path}."""
    d = tmp_path_factory.mktemp("mpi_programs")
    return {name: f.compile("mpi_trivial.c", d / f"mpi_trivial_{name}")
            for name, f in MPI_FAMILIES.items()}


def test_detect_the_mpi_of_a_command_line(programs):
    ompi, mpich = str(programs["openmpi"]), str(programs["mpich"])
    assert mpi_layer.linked_mpi(ompi) == "openmpi"
    assert mpi_layer.linked_mpi(mpich) == "mpich"
    assert mpi_layer.linked_mpi("true") is None
    # the program a launcher starts tells, whatever the launcher
    assert mpi_layer.detect([ompi]) == "openmpi"
    assert mpi_layer.detect(["mpirun", "-np", "4", mpich]) == "mpich"
    assert mpi_layer.detect(["mpirun.mpich", "-np", "4", ompi]) == "openmpi"
    # else MPICH's launcher by its name (mpiexec.hydra behind mpirun.mpich)
    assert mpi_layer.detect(["mpirun.mpich", "-np", "4", "hostname"]) == "mpich"
    assert mpi_layer.detect(["mpiexec.hydra", "-n", "2", "hostname"]) == "mpich"
    # Open MPI's mpirun (Debian's default) or a script: nothing tells (--mpi: Open MPI)
    assert mpi_layer.detect(["mpirun", "-np", "2", "hostname"]) is None
    assert mpi_layer.detect(["sh", "-c", f"mpirun.mpich -np 2 {mpich}"]) is None


def test_mpi_names_the_layer_when_nothing_tells(heapscope, tmp_path, programs):
    """--mpi=mpich: MPICH ranks started by a shell command, which --mpi alone could not
    see through (it would take Open MPI's layer)."""
    out = tmp_path / "out"
    program = programs["mpich"]
    heapscope("record", "--mpi=mpich", "-o", out, "--", "sh", "-c",
              f"mpirun.mpich -np 2 {program}")
    ranks = {p.rank: p for p in map(read_profile, out.glob("*.hsp")) if p.exe == str(program)}
    assert sorted(ranks) == [0, 1]
    for rank, p in ranks.items():
        assert "libheapscope_mpich.so" in {os.path.basename(m.path) for m in p.modules}, rank
        assert sum(n for (r, s), n in p.size_counts.items() if r == "[MPI]") > 1000, rank


def test_mpi_without_double_dash_still_takes_the_program(heapscope, tmp_path, programs):
    out = tmp_path / "out"
    heapscope("record", "-o", out, "--mpi", programs["mpich"])
    [p] = [read_profile(f) for f in out.glob("*.hsp")]
    assert "libheapscope_mpich.so" in {os.path.basename(m.path) for m in p.modules}
    res = heapscope("record", "--mpi=mpi", "-o", out, "--", "true", check=False)
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert "bad --mpi 'mpi': expected --mpi, --mpi=openmpi or --mpi=mpich" in res.stderr


def test_a_layer_not_built_is_a_one_line_error(heapscope, tmp_path, native, programs):
    """A native dir with the recorder but no MPI layer (heapscope built without MPI)."""
    lib = tmp_path / "native" / "lib"
    lib.mkdir(parents=True)
    (lib / "libheapscope.so").symlink_to(native / "lib" / "libheapscope.so")
    env = {"HEAPSCOPE_NATIVE_DIR": str(tmp_path / "native")}
    out = tmp_path / "out"
    for args, name in ((["--mpi=mpich", "--", "true"], "MPICH layer libheapscope_mpich.so"),
                       (["--mpi", "--", programs["mpich"]], "MPICH layer libheapscope_mpich.so"),
                       (["--mpi", "--", "true"], "Open MPI layer libheapscope_mpi.so")):
        res = heapscope("record", "-o", out, *args, env=env, check=False)
        assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
        assert f"heapscope: error: the {name} is not built" in res.stderr, res.stderr
    assert not out.exists()   # nothing ran
    # without --mpi the layer is automatic only where built: the program runs without it
    heapscope("record", "-o", out, "--", programs["mpich"], env=env)
    [p] = [read_profile(f) for f in out.glob("*.hsp")]
    assert not any("libheapscope_mpi" in m.path for m in p.modules)
    assert not any(r == "[MPI]" for r, s in p.size_counts)
