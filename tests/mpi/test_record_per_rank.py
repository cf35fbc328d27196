"""`mpirun -np 2 heapscope record -o DIR -- ./app` (and `srun`, tests/mpi/test_slurm.py)
runs one record per rank, all writing into DIR: each record speaks of its own rank's
profile only (it lists, symbolizes and checks that one, not every file that appeared in
DIR while it ran: with N ranks that was N times the work), and only rank 0's names the
job file. A Slurm batch script's record (SLURM_PROCID=0 but no job step) runs the whole
job and speaks of every file."""
import os
import re
import subprocess
import sys

import pytest

from conftest import MPI_FAMILIES
from heapscope.commands import record
from heapscope.profile import names


@pytest.mark.parametrize("family", list(MPI_FAMILIES))
def test_each_ranks_record_speaks_of_its_own_file(family, tmp_path):
    mpi = MPI_FAMILIES[family]
    program = mpi.compile("mpi_job_ranks.c", tmp_path / "mpi_job_ranks")
    out = tmp_path / "out"
    res = subprocess.run([*mpi.mpirun(2), sys.executable, "-m", "heapscope", "record",
                          "--per-rank", "all", "--no-symbolize", "-o", str(out), "--",
                          str(program)], capture_output=True, text=True, timeout=240)
    assert res.returncode == 0, res.stderr
    files = sorted(p.name for p in out.glob("heapscope.*.r*.hsp"))
    assert len(files) == 2, files
    listed = re.findall(r"heapscope: (\d+) profiles? in \S+?: (heapscope\.\S+?\.hsp)", res.stderr)
    # one line a rank, each naming one profile, together both
    assert sorted(name for _, name in listed) == files, res.stderr
    assert [n for n, _ in listed] == ["1", "1"], res.stderr
    assert res.stderr.count("heapscope: job file ") == 1, res.stderr


@pytest.mark.parametrize("env, rank", [
    ({"SLURM_PROCID": "0"}, None),                                 # a batch script
    ({"SLURM_PROCID": "3", "SLURM_STEP_ID": "0"}, 3),              # srun's task 3
    ({"OMPI_COMM_WORLD_RANK": "5", "SLURM_PROCID": "0"}, 5),       # mpirun in a batch script
    ({"PMI_RANK": "2"}, 2),                                        # hydra
    ({"PMI_RANK": "x", "PMIX_RANK": ""}, None),                    # not rank numbers
    ({}, None),
])
def test_own_rank_tells_a_rank_from_a_batch_script(monkeypatch, env, rank):
    for name in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID",
                 "SLURM_STEP_ID"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert record._own_rank() == rank


@pytest.mark.parametrize("name, rank", [
    ("heapscope.77.r3.node1.4242.hsp", 3),
    ("heapscope.77.r3.node1.4242.1.hsp", 3),      # the pid's name taken: a rank that exec'd
    ("heapscope.job.r12.node1.4242.hsp", 12),     # hydra: no job id
    ("heapscope.node1.4242.hsp", None),           # outside MPI
    ("heapscope.77.job.hsj", None),
])
def test_rank_of_reads_the_recorders_names(name, rank):
    assert names.rank_of(name) == rank
