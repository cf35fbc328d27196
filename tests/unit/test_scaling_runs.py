"""Which recordings `heapscope scaling` compares and how it groups them
(analysis/scaling_runs.py, analysis/scaling.py), on runs made here with known figures:
--by VAR's value from each command-line form and from the path, runs of two problem sizes
fitted apart, different programs or inputs refused, an MPI flavour suffix taken off."""
import pytest

from heapscope.analysis import scaling
from heapscope.analysis.scaling_runs import Run, by_value, same_program
from heapscope.errors import HeapscopeError
from heapscope.profile.mpi_library import MpiLibrary

OMPI = MpiLibrary("Open MPI v4.1.4, package: Debian OpenMPI", 3, 1)


def _run(ranks, argv, path=None, heap=None, exe="/apps/sim", library=OMPI):
    stats = {"heap_peak": dict(max=heap, max_rank=0, mean=heap) if heap is not None else None}
    return Run(path=path or f"/runs/p{ranks}", ranks=ranks, exe=exe, argv=argv, library=library,
               stats=stats, sampled=[], warnings=[], peak_absent="no --track")


@pytest.mark.parametrize("argv, path, value", [
    (["sim", "n=64"], None, "64"), (["sim", "-n", "64"], None, "64"),
    (["sim", "--n=64"], None, "64"), (["sim", "--n", "64"], None, "64"),
    (["lmp", "-in", "in.lj", "-var", "n", "20"], None, "20"), (["lmp", "-v", "n", "20"], None, "20"),
    (["sim"], "/runs/n=128/p4", "128"), (["sim", "nx=5"], "/runs/x", None)])
def test_by_value_forms(argv, path, value):
    assert by_value(_run(4, argv, path), "n") == value


def test_two_problem_sizes_are_fitted_apart():
    # a 1/p domain share of a problem of n MB on top of 2 MB, at n = 8 and 16
    runs = [_run(p, ["sim", "-n", str(n)], path=f"/runs/n{n}p{p}", heap=2_000_000 + n * 1_000_000 // p)
            for n in (8, 16) for p in (1, 2, 4, 8)]
    same_program(runs, "n")
    doc = scaling.build(runs, [16], by="n")
    total = [c for c in doc["components"] if c["component"] == "total"]
    assert [c["by"] for c in total] == [dict(variable="n", value="8"), dict(variable="n", value="16")]
    for c, n in zip(total, (8, 16)):
        law = c["laws"]["heap_peak_per_rank"]
        assert (law["law"], round(law["coefficients"]["b"])) == ("1/p", n * 1_000_000)
        assert c["predictions"][0]["heap_peak_per_rank"] == 2_000_000 + n * 1_000_000 // 16


def test_different_inputs_without_by_are_refused():
    runs = [_run(2, ["sim", "-n", "8"]), _run(4, ["sim", "-n", "16"])]
    with pytest.raises(HeapscopeError, match="different inputs.*--by VAR"):
        same_program(runs)
    with pytest.raises(HeapscopeError, match="no m in its command line"):
        same_program(runs, "m")


def test_a_program_built_per_mpi_is_one_program():
    mpich = MpiLibrary("MPICH Version:\t4.0.2", 3, 1)
    runs = [_run(2, ["/usr/bin/gmx_mpi.openmpi", "mdrun"], exe="/usr/bin/gmx_mpi.openmpi"),
            _run(2, ["/usr/bin/gmx_mpi.mpich", "mdrun"], exe="/usr/bin/gmx_mpi.mpich", library=mpich)]
    same_program(runs)
    assert {r.program for r in runs} == {"gmx_mpi"}
    other = [runs[0], _run(4, ["/usr/bin/lmp", "mdrun"], exe="/usr/bin/lmp")]
    with pytest.raises(HeapscopeError, match="different programs"):
        same_program(other)
