"""Fortran MPI programs under the MPI layer, with `use mpi` and with `use mpi_f08`, on 4
ranks of Open MPI and of MPICH: the blocks the MPI library allocates inside the
program's MPI calls count for "[MPI]", the program's own arrays stay the application's,
MPI_PCONTROL marks regions, MPI_FINALIZE writes one snapshot. Only the layer's Fortran
wrappers (src/mpi/gen_fortran_wrappers.py) see the calls that bypass the C entry points:
all of Open MPI's bindings call PMPI_* directly; MPICH's `use mpi` bindings call the C
MPI_* (the C wrappers see them), its mpi_f08 ones without buffers call PMPI_*."""
import pytest

from heapscope.profile import read_profile


@pytest.mark.parametrize("binding", ["mpi", "mpi_f08"])
def test_fortran_mpi_calls_are_attributed(heapscope, tmp_path, binding, mpi):
    flags = ["-DHS_F08"] if binding == "mpi_f08" else []
    program = mpi.compile("mpi_job_fortran.F90", tmp_path / "mpi_job_fortran", *flags,
                          fortran=True)
    out = tmp_path / "out"
    heapscope("record", "--mpi", "-o", out, "--", *mpi.mpirun(4), program)
    ranks = {p.rank: p for p in map(read_profile, out.glob("*.hsp")) if p.rank >= 0}
    assert sorted(ranks) == [0, 1, 2, 3]
    for rank, p in ranks.items():
        c = p.size_counts
        known = {k: n for k, n in c.items() if k[1] in (4000000, 7777, 16000)}
        assert known == {("(none)", 4000000): 2, ("pcontrol-1", 7777): 3, ("(none)", 16000): 2}, rank
        mpi_blocks = sum(n for (r, s), n in c.items() if r == "[MPI]")
        mpi_bytes = sum(s * n for (r, s), n in c.items() if r == "[MPI]")
        # the MPI library's start-up alone is thousands of blocks and megabytes (about
        # 5 MB with Open MPI, 2.6 MB with MPICH)
        assert mpi_blocks > 1000 and mpi_bytes > 1_000_000, (rank, mpi_blocks, mpi_bytes)
        assert p.snapshot_reason == "exit" and p.snapshot_seq == 1   # 0 was MPI_FINALIZE's


@pytest.mark.parametrize("binding", ["mpi", "mpi_f08"])
def test_fortran_mpi_abort_records_its_code(heapscope, tmp_path, binding, mpi):
    """MPI_ABORT from Fortran (Open MPI's bindings call PMPI_Abort directly, past the C
    MPI_Abort): the aborting rank's last snapshot says mpi-abort with its code, and
    holds its 2 arrays of 4,000,000 bytes. Recorded without --mpi."""
    flags = ["-DHS_F08"] if binding == "mpi_f08" else []
    program = mpi.compile("mpi_job_fortran.F90", tmp_path / "mpi_job_fortran", *flags,
                          fortran=True)
    out = tmp_path / "out"
    res = heapscope("record", "-o", out, "--", *mpi.mpirun(4), program, "abort", check=False)
    assert res.returncode == 23, res.stderr
    [p] = [p for p in map(read_profile, out.glob("*.r1.*.hsp")) if p.exe == str(program)]
    assert (p.snapshot_reason, p.ending.error_code) == ("mpi-abort", 23)
    assert p.size_counts[("(none)", 4000000)] == 2
