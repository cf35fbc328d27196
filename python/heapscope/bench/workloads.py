"""The bundled workload programs (workloads/ in the source tree, hs-wl-* in native/bin)
as benchmark entries: which program, with which arguments at the benchmark size and
at the small size the tests use.
"""
import os
import shutil
from dataclasses import dataclass
from typing import List, Tuple

from heapscope.errors import HeapscopeError
from heapscope.native import native_dir


@dataclass(frozen=True)
class Workload:
    name: str                 # what --workloads and the tables call it
    program: str              # hs-wl-<program> in native/bin
    args: Tuple[str, ...]     # benchmark size (about 0.2 to 1.5 s on one core)
    small: Tuple[str, ...]    # test size (well under 0.2 s)
    what: str
    mpi_procs: int = 0        # > 0: launched by mpirun with this many processes

    @property
    def path(self):
        return native_dir() / "bin" / f"hs-wl-{self.program}"

    def built(self) -> bool:
        return self.path.exists() and (self.mpi_procs == 0 or shutil.which("mpirun") is not None)

    def argv(self, small: bool = False) -> List[str]:
        argv = [str(self.path), *(self.small if small else self.args)]
        if self.mpi_procs:
            launcher = ["mpirun", "--oversubscribe"]
            if os.geteuid() == 0:
                launcher.append("--allow-run-as-root")
            argv = launcher + ["-np", str(self.mpi_procs)] + argv
        return argv


WORKLOADS = [
    Workload("fem-temporaries", "fem-temporaries", (), ("--cells", "16", "--subdomains", "4"),
             "finite-element phases with seed-000 allocation anomalies"),
    Workload("fem-fixed", "fem-temporaries", ("--fixed",),
             ("--cells", "16", "--subdomains", "4", "--fixed"),
             "the same simulation with the anomalies fixed (same checksum)"),
    Workload("cxx-churn", "cxx-churn", (), ("--ops", "20000", "--working-set", "500"),
             "C++ container churn, about 12.7 M allocations"),
    Workload("map-churn", "map-churn", (), ("--ops", "20000", "--working-set", "500"),
             "std::map<int, string> and small new/delete churn, about 30 M allocations"),
    Workload("mesh-refine", "mesh-refine", (), ("--rounds", "6", "--min-area-ppb", "20000"),
             "pointer-based triangle mesh refinement, growing"),
    Workload("mesh-refine-threads", "mesh-refine", ("--threads", "2"),
             ("--rounds", "6", "--min-area-ppb", "20000", "--threads", "2"),
             "the same, two strips refined by two threads"),
    Workload("mesh-refine-pool", "mesh-refine", ("--pool", "1"),
             ("--rounds", "6", "--min-area-ppb", "20000", "--pool", "1"),
             "the same with the mesh-generation study's per-thread pools"),
    Workload("small-churn", "small-churn", (), ("--ops", "20000", "--slots", "500"),
             "random 16-256 B replacements over a working set"),
    Workload("hot-odd", "hot-odd", (), ("--rounds", "200", "--batch", "50"),
             "hot odd sizes 72/104/136 B, reverse-order frees"),
    Workload("row-arrays", "row-arrays", (), ("--steps", "20", "--rows", "500"),
             "pointer-per-row arrays (16-96 B rows) built and freed every step, C"),
    Workload("patch-alloc", "patch-alloc", (), ("--steps", "20", "--patches", "500"),
             "patch arrays (16-104 B) allocated and deallocated every step, Fortran"),
    Workload("ghost-cells", "ghost-cells", (), ("--ops", "20000", "--arrays", "2000"),
             "1e5 live arrays of 2^k+2 doubles (528/1040/2064 B) replaced at random"),
    Workload("prodcon", "prodcon", (), ("--batches", "200", "--batch", "20"),
             "one thread allocates, another frees"),
    Workload("handover", "handover", (), ("--rounds", "50", "--objects", "100"),
             "threads swap ownership of object arrays every round"),
    Workload("false-sharing", "false-sharing", (), ("--rounds", "50", "--writes", "1000"),
             "small objects written by different threads"),
    Workload("realloc-large", "realloc-large", (), ("--ops", "300"),
             "realloc/free churn of 8 KiB-1 MiB blocks"),
    Workload("thread-churn", "thread-churn", (), ("--rounds", "30", "--objects", "50"),
             "threads exit with live objects others free"),
    Workload("mpi-alltoall", "mpi-alltoall", (), ("--iterations", "4"),
             "MPI all-to-all alternating 2 KB and 4 MB per process", mpi_procs=2),
]

BY_NAME = {w.name: w for w in WORKLOADS}


def select(spec: str) -> List[Workload]:
    """`all` (every workload that is built) or a comma-separated list of names."""
    if spec == "all":
        chosen = [w for w in WORKLOADS if w.built()]
        if not chosen:
            raise HeapscopeError(f"no workload is built in {native_dir() / 'bin'}: reinstall heapscope")
        return chosen
    chosen = []
    for name in [n.strip() for n in spec.split(",") if n.strip()]:
        if name not in BY_NAME:
            raise HeapscopeError(f"unknown workload '{name}' (choose from all, "
                                 f"{', '.join(BY_NAME)})")
        w = BY_NAME[name]
        if not w.built():
            need = "MPI (apt-get install libopenmpi-dev openmpi-bin)" if w.mpi_procs else "a rebuild"
            raise HeapscopeError(f"workload '{name}' is not built ({w.path} missing): needs {need}")
        chosen.append(w)
    if not chosen:
        raise HeapscopeError("--workloads is empty")
    return chosen
