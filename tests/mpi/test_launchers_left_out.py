"""MPI without ceremony: `heapscope record -- mpirun ...` (no --mpi) gives each program that
links an MPI the layer of that MPI, and nothing to the launcher and its daemons; every
merged report leaves launchers and daemons out (one note line; --launchers keeps them),
so a singleton MPI program's report is the program's, not the orted it spawned."""
import json
import os

from heapscope.analysis.page_documents import collect
from heapscope.profile import read_profile

from conftest import MPI_FAMILIES

LAYERS = {"libheapscope_mpi.so", "libheapscope_mpich.so"}


def _layers(p):
    return {os.path.basename(m.path) for m in p.modules} & LAYERS


def _mpi_blocks(p):
    return sum(n for (r, _s), n in p.size_counts.items() if "[MPI]" in r.split("/"))


def test_each_rank_gets_its_layer_and_the_launchers_none(mpi, heapscope, tmp_path):
    program = mpi.compile("mpi_trivial.c", tmp_path / "mpi_trivial")
    out = tmp_path / "out"
    # through a shell: nothing on the command line tells which MPI the ranks link
    heapscope("record", "-o", out, "--", "sh", "-c",
              " ".join([*mpi.mpirun(2), str(program)]))
    ranks, others = {}, []
    for f in out.glob("*.hsp"):
        p = read_profile(f)
        if p.exe == str(program) and p.snapshot_reason == "exit":
            ranks[p.rank] = p
        else:
            others.append(p)
    assert sorted(ranks) == [0, 1]
    for rank, p in ranks.items():
        assert _layers(p) == {mpi.layer}, rank
        assert _mpi_blocks(p) > 1000, rank            # MPI_Init's blocks are MPI's
    names = {os.path.basename(p.exe) for p in others}
    assert names & {"sh", "orterun", "mpiexec.hydra", "hydra_pmi_proxy"}, names
    for p in others:                                   # sh, mpirun, orted, hydra: no layer
        assert _layers(p) == set() and _mpi_blocks(p) == 0, p.exe


def test_a_singleton_report_is_the_program_not_its_orted(heapscope, tmp_path):
    openmpi = MPI_FAMILIES["openmpi"]
    program = openmpi.compile("mpi_trivial.c", tmp_path / "mpi_trivial")
    out = tmp_path / "out"
    heapscope("record", "-o", out, "--", program)      # MPI_Init spawns an orted
    profiles = [read_profile(f) for f in out.glob("*.hsp")]
    assert any(os.path.basename(p.exe) == "orted" for p in profiles)
    [own] = [p for p in profiles if p.exe == str(program) and p.snapshot_reason == "exit"]
    res = heapscope("report", out, "--format", "json")
    doc = json.loads(res.stdout)
    assert [d["pid"] for d in doc["processes"]] == [own.pid]
    assert res.stderr.count("\n") == 1 and "left out 1 launcher/daemon process (orted pid" in res.stderr
    assert sum(t["count"] for t in doc["totals"].values()) == sum(own.size_counts.values())
    every = json.loads(heapscope("report", out, "--format", "json", "--launchers").stdout)
    assert len(every["processes"]) == len(profiles) == 3   # the program, orted, its pre-exec fork
    stacks = heapscope("stacks", out, "--size", "all", "--format", "json", check=False)
    assert "left out 1 launcher/daemon process" in stacks.stderr
    page = collect([str(out)])                         # the HTML page's documents
    assert [d["pid"] for d in page["report"]["processes"]] == [own.pid]
    assert page["left_out"].startswith("left out 1 launcher/daemon process (orted pid")


def test_the_note_counts_the_launchers_not_the_ranks_pre_exec_forks(mpi, heapscope, tmp_path):
    """`record -- mpirun -np 4`: mpirun (and hydra's proxy) fork once per rank, and each
    fork's file, written at its exec, has the launcher's name and the rank's pid. The
    note counts and names the real launchers and says what the forks are; it never
    calls a rank's pid a launcher's."""
    program = mpi.compile("mpi_trivial.c", tmp_path / "mpi_trivial")
    out = tmp_path / "out"
    heapscope("record", "-o", out, "--", *mpi.mpirun(4), program)
    files = [read_profile(f) for f in out.glob("*.hsp")]
    ranks = {p.pid for p in files if p.exe == str(program) and p.snapshot_reason == "exit"}
    assert len(ranks) == 4
    forks = [p for p in files if p.snapshot_reason == "exec" and p.pid in ranks]
    launchers = [p for p in files if p.snapshot_reason == "exit" and p.exe != str(program)]
    assert len(forks) == 4 and {os.path.basename(p.exe) for p in forks} <= {"orterun", "hydra_pmi_proxy"}
    assert {os.path.basename(p.exe) for p in launchers} in ({"orterun"}, {"mpiexec.hydra", "hydra_pmi_proxy"})
    res = heapscope("report", out, "--by", "size", "--format", "json")
    [note] = [line for line in res.stderr.splitlines() if "left out" in line]
    n = len(launchers)
    named = ", ".join(f"{os.path.basename(p.exe)} pid {p.pid}" for p in
                      sorted(launchers, key=lambda p: str(p.path)))
    assert f"left out {n} launcher/daemon process{'es' if n > 1 else ''} ({named})" in note, note
    fork_name = os.path.basename(forks[0].exe)
    pids = ", ".join(str(p.pid) for p in sorted(forks, key=lambda p: str(p.path)))
    assert f"4 forks of {fork_name} before they exec'd mpi_trivial (pids {pids}, which mpi_trivial kept)" in note
    assert all(f"pid {pid}" not in note for pid in ranks)
    doc = json.loads(res.stdout)
    assert sorted(d["pid"] for d in doc["processes"]) == sorted(ranks)
