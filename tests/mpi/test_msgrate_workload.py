"""The small-message rate workload (hs-wl-mpi-msgrate) on 4 ranks: the same checksum with
and without the recorder and the MPI layer, its two message buffers attributed to the
application exactly, every rank's profile in the job report."""
import json
import subprocess

from heapscope.profile import read_profile

from conftest import require

MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "4"]


def _checksum(stdout):
    (line,) = [l for l in stdout.splitlines() if l.startswith("checksum: ")]
    return line.split()[1]


def test_msgrate_under_the_mpi_layer(native, heapscope, tmp_path):
    require("mpirun")
    program = native / "bin" / "hs-wl-mpi-msgrate"
    assert program.exists(), "hs-wl-mpi-msgrate is built where CMake finds MPI"
    argv = [str(program), "--messages", "2000", "--size", "4321", "--warmup", "10"]
    plain = subprocess.run(MPIRUN + argv, capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0, plain.stderr[-800:]
    assert "8000 messages of 4321 bytes" in plain.stdout and "messages/s: " in plain.stdout
    out = tmp_path / "out"
    rec = heapscope("record", "--mpi", "-o", out, "--", *MPIRUN, *argv)
    assert _checksum(rec.stdout) == _checksum(plain.stdout)
    ranks = {p.rank: p for p in map(read_profile, out.glob("*.hsp")) if p.rank >= 0}
    assert sorted(ranks) == [0, 1, 2, 3]
    for rank, p in ranks.items():
        mine = {r: n for (r, s), n in p.size_counts.items() if s == 4321}
        assert mine == {"(none)": 2}, (rank, mine)      # the send and receive buffers
    doc = json.loads(heapscope("report", out, "--format", "json").stdout)
    assert [r["rank"] for r in doc["per_rank"]] == [0, 1, 2, 3]
    assert all(r["alloc_mpi_blocks"] > 0 for r in doc["per_rank"])


def test_msgrate_one_rank_messaging_itself(native, heapscope, tmp_path):
    program = native / "bin" / "hs-wl-mpi-msgrate"
    argv = ["mpirun", "--allow-run-as-root", "-np", "1", str(program), "--messages", "3000",
            "--size", "4321"]
    plain = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0, plain.stderr[-800:]
    assert "1 process messaging itself, 3000 messages of 4321 bytes" in plain.stdout
    assert "messages per CPU second: " in plain.stdout
    rec = heapscope("record", "--mpi", "-o", tmp_path / "out", "--", *argv)
    assert _checksum(rec.stdout) == _checksum(plain.stdout)
    (p,) = [p for p in map(read_profile, (tmp_path / "out").glob("*.hsp")) if p.rank == 0]
    assert {r: n for (r, s), n in p.size_counts.items() if s == 4321} == {"(none)": 2}
