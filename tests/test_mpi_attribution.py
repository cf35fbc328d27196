"""The MPI layer (libheapscope_mpi.so) under real mpirun: heap blocks allocated inside
MPI calls count for the region "[MPI]", the application's own blocks stay where they were."""
import subprocess

from heapscope.profile import read_profile

from conftest import PROGRAMS, have


def test_alltoall_application_and_mpi_blocks_are_told_apart(heapscope, tmp_path):
    assert have("mpicc") and have("mpirun"), "apt-get install openmpi-bin libopenmpi-dev"
    program = tmp_path / "mpi_alltoall"
    subprocess.run(["mpicc", "-g", "-o", program, PROGRAMS / "mpi_alltoall.c"], check=True)
    out = tmp_path / "out"
    heapscope("record", "--mpi", "-o", out, "--", "mpirun", "--oversubscribe",
              "--allow-run-as-root", "-np", "4", program)
    files = [read_profile(f) for f in sorted(out.glob("heapscope.*.hsp"))]
    ranks = {p.rank: p for p in files if p.exe == str(program)}
    assert sorted(ranks) == [0, 1, 2, 3]
    for rank, p in ranks.items():
        mpi = {(r, s): n for (r, s), n in p.size_counts.items() if r.split("/")[-1] == "[MPI]"}
        app = {(r, s): n for (r, s), n in p.size_counts.items() if (r, s) not in mpi}
        assert sum(n for (r, s), n in app.items() if s == 4000000) == 10, rank
        assert app[("(none)", 4000000)] == 10, rank
        assert app[("(none)", 16000)] == 2, rank  # the Alltoall send and receive buffers
        assert not any(s == 4000000 for (r, s) in mpi), rank
        assert sum(mpi.values()) > 0, rank
        assert sum(s * n for (r, s), n in mpi.items()) > 0, rank


def test_pcontrol_marks_regions_and_the_layer_is_automatic_for_mpi_programs(heapscope,
                                                                              tmp_path):
    program = tmp_path / "mpi_pcontrol"
    subprocess.run(["mpicc", "-g", "-o", program, PROGRAMS / "mpi_pcontrol.c"], check=True)
    out = tmp_path / "out"
    heapscope("record", "-o", out, "--", program)  # no --mpi: ldd shows libmpi
    files = [read_profile(f) for f in sorted(out.glob("heapscope.*.hsp"))]
    main = [p for p in files if p.exe == str(program) and p.size_counts]
    assert len(main) == 1
    counts = main[0].size_counts
    assert {r: n for (r, s), n in counts.items() if s == 7777} == {"pcontrol-1": 3, "(none)": 2}
    assert sum(n for (r, s), n in counts.items() if r == "[MPI]") > 0


def test_trivial_run_is_almost_all_mpi(heapscope, tmp_path):
    """MPI_Init + MPI_Finalize only: what is left outside "[MPI]" is the C runtime's and
    the libraries' start-up before main (about 128 KB against about 5.3 MB with Open MPI)."""
    program = tmp_path / "mpi_trivial"
    subprocess.run(["mpicc", "-g", "-o", program, PROGRAMS / "mpi_trivial.c"], check=True)
    out = tmp_path / "out"
    heapscope("record", "--mpi", "-o", out, "--", "mpirun", "--oversubscribe",
              "--allow-run-as-root", "-np", "4", program)
    ranks = {p.rank: p for p in map(read_profile, sorted(out.glob("heapscope.*.hsp")))
             if p.exe == str(program)}
    assert sorted(ranks) == [0, 1, 2, 3]
    for rank, p in ranks.items():
        mpi = sum(s * n for (r, s), n in p.size_counts.items() if r == "[MPI]")
        other = sum(s * n for (r, s), n in p.size_counts.items() if r != "[MPI]")
        assert mpi > 0 and other < 0.05 * (mpi + other), (rank, mpi, other)
