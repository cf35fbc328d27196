"""The MPI layer under real mpirun, with Open MPI (libheapscope_mpi.so) and with MPICH
(libheapscope_mpich.so; the `mpi` fixture runs each test under both): heap blocks
allocated inside MPI calls count for the region "[MPI]", the application's own blocks
stay where they were, and `heapscope record` preloads the layer of the program's MPI."""
from heapscope.profile import read_profile


def record_ranks(heapscope, mpi, out, program, n=4):
    """`record --mpi -- <mpirun> -np n program`: {rank: profile} of the program's ranks,
    checked to be one file per rank, named with its rank, under the family's layer."""
    heapscope("record", "--mpi", "-o", out, "--", *mpi.mpirun(n), program)
    files = [read_profile(f) for f in sorted(out.glob("heapscope.*.hsp"))]
    ranks = {}
    for p in files:
        if p.exe == str(program):
            assert p.rank not in ranks and f".r{p.rank}." in p.path, p.path
            ranks[p.rank] = p
            layers = {m.path.rsplit("/", 1)[-1] for m in p.modules if "libheapscope_mpi" in m.path}
            assert layers == {mpi.layer}, (p.rank, layers)
    assert sorted(ranks) == list(range(n))
    return ranks


def test_alltoall_application_and_mpi_blocks_are_told_apart(heapscope, tmp_path, mpi):
    program = mpi.compile("mpi_alltoall.c", tmp_path / "mpi_alltoall")
    for rank, p in record_ranks(heapscope, mpi, tmp_path / "out", program).items():
        mpi_counts = {(r, s): n for (r, s), n in p.size_counts.items() if r.split("/")[-1] == "[MPI]"}
        app = {(r, s): n for (r, s), n in p.size_counts.items() if (r, s) not in mpi_counts}
        assert sum(n for (r, s), n in app.items() if s == 4000000) == 10, rank
        assert app[("(none)", 4000000)] == 10, rank
        assert app[("(none)", 16000)] == 2, rank  # the Alltoall send and receive buffers
        assert not any(s == 4000000 for (r, s) in mpi_counts), rank
        assert sum(mpi_counts.values()) > 0, rank
        assert sum(s * n for (r, s), n in mpi_counts.items()) > 0, rank


def test_pcontrol_marks_regions_and_the_layer_is_automatic_for_mpi_programs(heapscope,
                                                                              tmp_path, mpi):
    program = mpi.compile("mpi_pcontrol.c", tmp_path / "mpi_pcontrol")
    out = tmp_path / "out"
    heapscope("record", "-o", out, "--", program)  # no --mpi: ldd shows libmpi / libmpich
    files = [read_profile(f) for f in sorted(out.glob("heapscope.*.hsp"))]
    main = [p for p in files if p.exe == str(program) and p.size_counts]
    assert len(main) == 1
    assert mpi.layer in {m.path.rsplit("/", 1)[-1] for m in main[0].modules}
    counts = main[0].size_counts
    assert {r: n for (r, s), n in counts.items() if s == 7777} == {"pcontrol-1": 3, "(none)": 2}
    assert sum(n for (r, s), n in counts.items() if r == "[MPI]") > 0


def test_trivial_run_is_almost_all_mpi(heapscope, tmp_path, mpi):
    """MPI_Init + MPI_Finalize only: what is left outside "[MPI]" is the C runtime's and
    the libraries' start-up before main (about 128 KB against about 5.3 MB with Open MPI,
    53 KB against 2.6 MB with MPICH)."""
    program = mpi.compile("mpi_trivial.c", tmp_path / "mpi_trivial")
    for rank, p in record_ranks(heapscope, mpi, tmp_path / "out", program).items():
        in_mpi = sum(s * n for (r, s), n in p.size_counts.items() if r == "[MPI]")
        other = sum(s * n for (r, s), n in p.size_counts.items() if r != "[MPI]")
        assert in_mpi > 1_000_000 and other < 0.05 * (in_mpi + other), (rank, in_mpi, other)
