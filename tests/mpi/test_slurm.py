"""Real Slurm: `srun -n 2 heapscope record -o DIR -- ./app` names each rank's file from
SLURM_JOB_ID and SLURM_PROCID, and an MPI program started by `srun --mpi=pmix` writes its
job file. Needs a running Slurm with an idle node: scripts/slurm_local.sh (root) starts
munged, slurmctld and slurmd on this machine, and CI runs it first (docs/recorder.md
"Slurm"); without one these tests are skipped, saying why, and the naming from the same
variables is tested without Slurm in test_rank_names.py."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import MPI_FAMILIES
from heapscope.profile import read_profile
from heapscope.profile.job_file import read_job_file


def _slurm():
    if not shutil.which("srun") or not shutil.which("sinfo"):
        return "srun/sinfo not installed (scripts/setup.sh installs slurm-wlm)"
    res = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=20)
    # "idle*" is a node that does not answer: srun would wait for it
    if res.returncode != 0 or not {"idle", "mixed"} & set(res.stdout.split()):
        said = (res.stderr.strip() or res.stdout.strip() or "nothing").splitlines()[-1][:100]
        return f"no Slurm controller with an idle node answers here (as root: bash scripts/slurm_local.sh; sinfo: {said})"
    return None


@pytest.fixture(scope="module")
def slurm():
    why = _slurm()
    if why:
        pytest.skip(why)


def _srun(*args, timeout=120):
    res = subprocess.run(["srun", *args], capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, res.stderr
    return res


def test_srun_names_files_by_job_and_rank(slurm, build, tmp_path):
    program = build("rank_names.c")
    out = tmp_path / "out"
    res = _srun("-n", "2", sys.executable, "-m", "heapscope", "record", "-o", str(out), "--",
                str(program))
    profiles = sorted((read_profile(f) for f in out.glob("*.hsp")), key=lambda p: p.rank)
    assert [p.rank for p in profiles] == [0, 1], res.stderr
    job = profiles[0].job_id
    assert job.isdigit() and profiles[1].job_id == job
    for p in profiles:
        assert p.path.endswith(f"heapscope.{job}.r{p.rank}.{p.host.split('.')[0]}.{p.pid}.hsp")
        assert p.size_counts[("(none)", 4321)] == 1
    # each task's record speaks of its own rank's file (srun's tasks share -o DIR)
    listed = re.findall(r"heapscope: (\d+) profiles? in \S+?: (heapscope\.\S+?\.hsp)", res.stderr)
    assert sorted(listed) == sorted(("1", os.path.basename(p.path)) for p in profiles), res.stderr


def test_srun_mpi_job_writes_the_job_file(slurm, tmp_path):
    mpi = MPI_FAMILIES["openmpi"]
    program = mpi.compile("mpi_job_ranks.c", tmp_path / "mpi_job_ranks")
    out = tmp_path / "out"
    res = _srun("-n", "2", "--mpi=pmix", sys.executable, "-m", "heapscope", "record",
                "--per-rank", "none", "-o", str(out), "--", str(program), timeout=180)
    assert res.stderr.count("heapscope: job file ") == 1, res.stderr      # rank 0's record
    (path,) = out.glob("heapscope.*.job.hsj")
    job = read_job_file(path)
    assert job.job_id.isdigit() and path.name == f"heapscope.{job.job_id}.job.hsj"
    assert [r.rank for r in job.ranks] == [0, 1]
    assert job.size_counts[("(none)", 1000000)] == 1 + 2
    assert not list(out.glob("heapscope.*.r*.hsp"))
