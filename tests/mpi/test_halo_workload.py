"""The halo-exchange workload (hs-wl-mpi-halo) on 3 ranks: the same checksum with and
without the recorder and the MPI layer, its halo buffer attributed to the application,
and every MPI call through the layer counted, the queries that have no wrapper not: per
rank MPI_Init, MPI_Barrier, 6 calls a step (2 MPI_Irecv, 2 MPI_Isend, MPI_Waitall,
MPI_Allreduce), MPI_Reduce, MPI_Gather, MPI_Finalize; its MPI_Comm_rank, MPI_Comm_size
and MPI_Wtime calls are not."""
import subprocess

from heapscope.profile import read_profile

from conftest import MPI_FAMILIES

STEPS, WARMUP, SIZE = 3000, 20, 4321


def _checksum(stdout):
    (line,) = [l for l in stdout.splitlines() if l.startswith("checksum: ")]
    return line.split()[1]


def test_halo_under_the_mpi_layer(native, heapscope, tmp_path):
    program = native / "bin" / "hs-wl-mpi-halo"
    assert program.exists(), "hs-wl-mpi-halo is built where CMake finds MPI"
    launch = MPI_FAMILIES["openmpi"].mpirun(3)
    argv = [str(program), "--steps", str(STEPS), "--warmup", str(WARMUP), "--size", str(SIZE)]
    plain = subprocess.run(launch + argv, capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0, plain.stderr[-800:]
    assert f"3 processes, {STEPS} steps of 2 halos of {SIZE} bytes" in plain.stdout
    out = tmp_path / "out"
    rec = heapscope("record", "--mpi", "-o", out, "--", *launch, *argv)
    assert _checksum(rec.stdout) == _checksum(plain.stdout)
    ranks = {p.rank: p for p in map(read_profile, out.glob("*.hsp")) if p.rank >= 0}
    assert sorted(ranks) == [0, 1, 2]
    for rank, p in ranks.items():
        mine = {r: n for (r, s), n in p.size_counts.items() if s == 4 * SIZE}
        assert mine == {"(none)": 1}, (rank, mine)      # the four halos, one block
        tl = p.timeline
        assert tl.calipers_taken + tl.calipers_skipped == 6 * (STEPS + WARMUP) + 5, rank
        labels = {s.label for s in tl.samples if s.kind == "mpi-before"}
        assert {"MPI_Init", "MPI_Finalize"} <= labels, rank
        assert not labels & {"MPI_Comm_rank", "MPI_Comm_size"}, rank
