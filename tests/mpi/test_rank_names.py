"""Rank and job in the recorder's file names and PROCESS chunk, from the variables each
launcher sets (no MPI needed: the program runs with them set by hand):
Open MPI OMPI_COMM_WORLD_RANK (+ OMPI_MCA_ess_base_jobid), PMIx PMIX_RANK (+
PMIX_NAMESPACE), MPICH's hydra and Intel MPI PMI_RANK (hydra sets no job id: "job"),
srun SLURM_PROCID (+ SLURM_JOB_ID); the first that holds a number wins, in that order;
SLURM_JOB_ID before OMPI_MCA_ess_base_jobid before PMIX_NAMESPACE; a value that is not a rank
number is ignored with one warning line (it used to become rank 0)."""
import json
import os
import socket
import subprocess

import pytest

from heapscope.profile import read_profile

LAUNCHER_VARS = ("OMPI_", "PMI_", "PMIX_", "SLURM_", "HEAPSCOPE_")
HOST = socket.gethostname().split(".")[0].replace("/", "_")

CASES = [
    # (id, environment, rank, job in the name, job_id in the file, warned variables)
    ("open-mpi", {"OMPI_COMM_WORLD_RANK": "3", "OMPI_MCA_ess_base_jobid": "2008350721"},
     3, "2008350721", "2008350721", []),
    ("hydra", {"PMI_RANK": "5"}, 5, "job", "", []),
    ("intel-mpi-in-slurm", {"PMI_RANK": "12", "SLURM_JOB_ID": "4711"}, 12, "4711", "4711", []),
    ("srun", {"SLURM_PROCID": "7", "SLURM_JOB_ID": "998877"}, 7, "998877", "998877", []),
    ("all-three", {"OMPI_COMM_WORLD_RANK": "1", "PMI_RANK": "2", "SLURM_PROCID": "3",
                   "SLURM_JOB_ID": "55", "OMPI_MCA_ess_base_jobid": "66"}, 1, "55", "55", []),
    ("pmi-before-slurm", {"PMI_RANK": "2", "SLURM_PROCID": "3"}, 2, "job", "", []),
    ("rank-zero", {"SLURM_PROCID": "0", "SLURM_JOB_ID": "9"}, 0, "9", "9", []),
    ("empty-is-unset", {"OMPI_COMM_WORLD_RANK": "", "PMI_RANK": "6"}, 6, "job", "", []),
    ("not-a-number-falls-through", {"OMPI_COMM_WORLD_RANK": "abc", "PMI_RANK": "4"},
     4, "job", "", ["OMPI_COMM_WORLD_RANK"]),
    ("trailing-garbage", {"SLURM_PROCID": "7x", "SLURM_JOB_ID": "31"}, -1, None, "31",
     ["SLURM_PROCID"]),
    ("negative", {"PMI_RANK": "-1"}, -1, None, "", ["PMI_RANK"]),
    ("too-long", {"OMPI_COMM_WORLD_RANK": "12345678901", "SLURM_PROCID": "8"}, 8, "job", "",
     ["OMPI_COMM_WORLD_RANK"]),
    ("none", {}, -1, None, "", []),
    # PMIx launchers: Open MPI 4's mpirun sets PMIX_RANK and PMIX_NAMESPACE beside its own
    ("pmix", {"PMIX_RANK": "6", "PMIX_NAMESPACE": "prterun-vm-4242@1"}, 6, "prterun-vm-4242@1",
     "prterun-vm-4242@1", []),
    ("pmix-slash-in-namespace", {"PMIX_RANK": "2", "PMIX_NAMESPACE": "a/b"}, 2, "a_b", "a_b", []),
    ("srun-mpi-pmix", {"PMIX_RANK": "3", "PMIX_NAMESPACE": "slurm.pmix.77.0", "SLURM_PROCID": "3",
                       "SLURM_JOB_ID": "77"}, 3, "77", "77", []),
    ("pmix-rank-before-pmi", {"PMIX_RANK": "1", "PMI_RANK": "9"}, 1, "job", "", []),
    # every variable each launcher sets for rank 1 (as printed by `launcher env` here)
    ("open-mpi-4-full", {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4",
                         "OMPI_MCA_ess_base_jobid": "350945281", "OMPI_MCA_ess_base_vpid": "1",
                         "PMIX_RANK": "1", "PMIX_NAMESPACE": "350945281"},
     1, "350945281", "350945281", []),
    ("hydra-full", {"PMI_RANK": "1", "PMI_SIZE": "4", "PMI_FD": "6", "MPI_LOCALRANKID": "1",
                    "MPI_LOCALNRANKS": "4"}, 1, "job", "", []),
    ("srun-full", {"SLURM_PROCID": "1", "SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "0",
                   "SLURM_NTASKS": "4", "SLURM_LOCALID": "1", "SLURM_NODEID": "0"},
     1, "4242", "4242", []),
]


def run(native, program, out, extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_VARS)}
    env.update(extra, LD_PRELOAD=str(native / "lib" / "libheapscope.so"),
               HEAPSCOPE_OUTPUT_DIR=str(out), HEAPSCOPE_TIMELINE_MS="0")
    proc = subprocess.Popen([str(program)], env=env, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return proc.pid, err


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_rank_and_job_from_the_launchers_variables(native, build, tmp_path, case):
    _, env, rank, job_in_name, job_id, warned = case
    program = build("rank_names.c")
    pid, err = run(native, program, tmp_path, env)
    (path,) = tmp_path.glob("*.hsp")
    if rank >= 0:
        assert path.name == f"heapscope.{job_in_name}.r{rank}.{HOST}.{pid}.hsp"
    else:
        assert path.name == f"heapscope.{HOST}.{pid}.hsp"
    p = read_profile(path)
    assert (p.rank, p.job_id, p.pid) == (rank, job_id, pid)
    assert p.size_counts[("(none)", 4321)] == 1
    lines = err.splitlines()
    assert len(lines) == len(warned), err
    for var, line in zip(warned, lines):
        assert line == f"heapscope: {var}='{env[var]}' is not a rank number: ignored"


def test_rank_files_of_a_hydra_job_make_a_job_report(native, build, tmp_path, heapscope):
    """PMI_RANK-named files (job "job": hydra sets no job id we read) are a job's ranks."""
    program = build("rank_names.c")
    pids = [run(native, program, tmp_path, {"PMI_RANK": str(r)})[0] for r in range(3)]
    doc = json.loads(heapscope("report", tmp_path, "--format", "json").stdout)
    assert doc["format"] == "heapscope-job" and doc["ranks"] == 3 and doc["job_id"] == ""
    assert [(r["rank"], r["pid"]) for r in doc["per_rank"]] == list(zip(range(3), pids))
    # recorded without the MPI layer: allocations counted, the MPI share unknown (not 0)
    assert all(r["alloc_blocks"] >= 1 and not r["mpi_layer"] and "alloc_mpi_blocks" not in r
               for r in doc["per_rank"])
