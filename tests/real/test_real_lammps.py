"""LAMMPS 20220106 (Debian 12), the Lennard-Jones melt example, one process (MPI singleton).

Busiest size: 100 bytes, 4,013 blocks. 98.7% of them are Open MPI's, made inside
`MPI_Init`, which LAMMPS' `main` (src/main.cpp, stripped: `?? (lmp+0x11cc)`) calls once:
no LAMMPS code decides them and nothing in LAMMPS can make fewer. The fix target is
therefore the runtime pattern line (MPI allocates per call of PMPI_Init, called from
main), not a ranked LAMMPS function: the ranked LAMMPS code carries 1%. The melt example
allocates nothing per time step. docs/real-applications.md has the evidence."""
from pathlib import Path

import pytest

from helpers.real_programs import (busiest, callgraph, record_as_a_user, require_version,
                                   size_counts)

pytestmark = pytest.mark.real
MELT = Path("/usr/share/lammps/examples/melt/in.melt")


@pytest.fixture(scope="module")
def lammps(tmp_path_factory):
    require_version("lammps", "20220106.git7586adbb6a+ds1-2+b2")
    assert MELT.exists(), f"{MELT} is missing: run scripts/setup.sh (lammps-examples)"
    tmp = tmp_path_factory.mktemp("lammps")
    cmd = ["lmp", "-in", MELT, "-log", "none", "-screen", "none"]
    record_as_a_user(tmp, cmd, 100)
    return tmp


def test_busiest_size_is_100_bytes(heapscope, lammps):
    counts = size_counts(heapscope, lammps / "counts")
    # the same in every run here; Open MPI's start-up decides it (its components, the
    # host's interfaces), so it is bounded rather than pinned
    size, count = busiest(counts)
    assert size == 100 and 3_900 <= count <= 4_150, (size, count)
    # outside MPI, 72 bytes: 545 of them with stacks are LAMMPS' style registry, one
    # std::map node per style (docs/real-applications.md); 207 more have none
    assert size_counts(heapscope, lammps / "counts", "(none)")[72] == 752


def test_fix_target_is_mpi_init_called_from_main(heapscope, lammps):
    doc = callgraph(heapscope, lammps / "stacks", 100)
    pattern = doc["runtime_patterns"][0]
    assert (pattern["family"], pattern["library"], pattern["entry"]) == \
        ("MPI", "libmpi.so.40", "PMPI_Init")
    assert pattern["share"] >= 0.98 and pattern["count"] == doc["count"] - 52
    # LAMMPS' main, stripped: one call site, in the program itself
    assert [site["function"] for site in pattern["call_sites"]] == ["?? (lmp+0x11cc)"]
    # what LAMMPS' own code carries is the rest: a few dozen blocks
    assert all(row["count"] <= 52 for row in doc["ranking"]), doc["ranking"][:3]
