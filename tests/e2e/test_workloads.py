"""The workload suite: every workload runs under every allocator at its small size
and prints the same checksum; fem-temporaries --fixed computes the same thing with
far fewer allocations (counted by the recorder); cxx-churn makes >= 10 M allocations."""
import json
import os
import subprocess
from pathlib import Path

import pytest

from heapscope import allocators
from heapscope.bench.workloads import WORKLOADS, BY_NAME
from heapscope.profile import load_profiles

from conftest import require

REPO = Path(__file__).resolve().parents[2]
PEERS = ["jemalloc", "tcmalloc", "mimalloc"]


def installed_allocators():
    """glibc, the Debian peers, and hsmalloc when its component is part of the tree.

    Missing pieces fail here rather than shrink the test: the peers are installed
    by scripts/setup.sh, and libhsmalloc.so is built whenever src/allocator is."""
    names = ["glibc"]
    for peer in PEERS:
        assert allocators.find_allocator(peer) is not None, \
            f"{peer} missing: apt-get install {allocators.PEERS[peer][1]}"
        names.append(peer)
    if (REPO / "src" / "allocator" / "CMakeLists.txt").exists():
        assert allocators.find_allocator("hsmalloc") is not None, \
            "src/allocator is in the tree but libhsmalloc.so is not built"
        names.append("hsmalloc")
    return names


def run_workload(workload, allocator, extra=()):
    argv = workload.argv(small=True) + list(extra)
    env = None
    lib = allocators.find_allocator(allocator)
    if lib is not None:
        env = dict(os.environ, LD_PRELOAD=str(lib))
    res = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, f"{workload.name} under {allocator}: {res.stderr[-800:]}"
    lines = [l for l in res.stdout.splitlines() if l.startswith("checksum: ")]
    assert len(lines) == 1, res.stdout
    checksum = lines[0].split()[1]
    assert len(checksum) == 16 and int(checksum, 16) >= 0
    return checksum


def test_every_workload_is_built(native):
    # CMake builds the MPI workloads only where MPI is installed, and set-up installs it
    if any(w.mpi_procs for w in WORKLOADS):
        require("mpicc", "mpirun")
    for w in WORKLOADS:
        assert w.built(), f"{w.path} is not built"


@pytest.mark.parametrize("name", [w.name for w in WORKLOADS])
def test_same_checksum_under_every_allocator(native, name):
    workload = BY_NAME[name]
    if workload.mpi_procs:
        require("mpicc", "mpirun")
    sums = {a: run_workload(workload, a) for a in installed_allocators()}
    assert len(set(sums.values())) == 1, sums


def test_fixed_variant_has_the_same_checksum(native):
    anomalous = run_workload(BY_NAME["fem-temporaries"], "glibc", ["--cells", "9"])
    fixed = run_workload(BY_NAME["fem-fixed"], "glibc", ["--cells", "9"])
    assert anomalous == fixed
    other = run_workload(BY_NAME["fem-temporaries"], "glibc", ["--cells", "10"])
    assert other != anomalous     # the checksum depends on the data


def _record(heapscope, tmp_path, name, argv):
    out = tmp_path / name
    heapscope("record", "-o", out, "--", *argv)
    (profile,) = load_profiles([str(p) for p in out.glob("*.hsp")])
    return profile.size_counts


def test_fem_fixed_removes_the_anomalies(native, heapscope, tmp_path):
    """Counted by the recorder at 16 x 16 cells (512 triangles), 4 subdomains.

    Anomalous variant, per triangle: every `mesh[e]` copy allocates one 12-byte
    node-id block -- twice in split (classify, number nodes), once in local
    (assemble), once in post; local also allocates two 72-byte row arrays
    (gradients, stiffness) and four 32-byte Eigen 2x2 matrices (material tensor:
    D, R and the two product temporaries); post one 72-byte gradient array."""
    program = str(BY_NAME["fem-temporaries"].path)
    size = ["--cells", "16", "--subdomains", "4"]
    bad = _record(heapscope, tmp_path, "anomalous", [program, *size])
    good = _record(heapscope, tmp_path, "fixed", [program, *size, "--fixed"])
    E = 2 * 16 * 16
    for region, size_, expected in [("split", 12, 2 * E), ("local", 12, E), ("post", 12, E),
                                    ("reduce", 12, 0), ("local", 72, 2 * E), ("post", 72, E),
                                    ("local", 32, 4 * E)]:
        assert bad.get((region, size_), 0) == expected, (region, size_)
        assert good.get((region, size_), 0) == 0, (region, size_)
    total_bad = sum(c for (r, _), c in bad.items() if r in ("split", "local", "reduce", "post"))
    total_good = sum(c for (r, _), c in good.items() if r in ("split", "local", "reduce", "post"))
    assert total_good * 20 < total_bad, (total_good, total_bad)


def test_cxx_churn_makes_ten_million_allocations_by_default(native, heapscope, tmp_path):
    counts = _record(heapscope, tmp_path, "churn", [str(BY_NAME["cxx-churn"].path)])
    assert sum(counts.values()) >= 10_000_000


@pytest.mark.parametrize("args, message", [
    (["--bogus"], "unknown option '--bogus'"),
    (["--ops", "-3"], "--ops wants an integer"),
    (["--ops"], "needs a value"),
])
def test_bad_workload_options(native, args, message):
    res = subprocess.run([str(BY_NAME["small-churn"].path), *args], capture_output=True, text=True)
    assert res.returncode == 2
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_workload_help_lists_its_options(native):
    res = subprocess.run([str(BY_NAME["mesh-refine"].path), "--help"], capture_output=True, text=True)
    assert res.returncode == 0 and "--threads" in res.stdout and "--rounds" in res.stdout


def test_bench_runs_the_bundled_workloads(heapscope, native, tmp_path):
    out = tmp_path / "w.json"
    heapscope("bench", "--quick", "--workloads", "hot-odd,fem-fixed", "--allocators",
              "glibc,jemalloc", "-n", "2", "--json", out)
    doc = json.loads(out.read_text())
    assert [c["name"] for c in doc["commands"]] == ["hot-odd", "fem-fixed"]
    for c in doc["commands"]:
        assert c["checksum"] and c["checksum_error"] is None
        assert all(len(cfg["runs"]) == 2 for cfg in c["configs"])
