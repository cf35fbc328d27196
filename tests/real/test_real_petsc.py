"""PETSc 3.18 (Debian 12): its tutorial snes/tutorials/ex12 (Poisson with DMPlex and
PetscFE; libpetsc3.18-dev-examples), built against libpetsc-real3.18-dev, on a 16 x 16
quadrilateral mesh with Q2 elements.

Busiest size: 32 bytes (7,381 blocks; the stacks hold 7,303 of them: 78 outside MPI are
missing without a note, as on Octave and gmsh). 74% come from `PetscObjectComposeFunction`: every new object
(each Mat, IS, PetscDualSpace) registers its type's methods by name in a linked list,
and `PetscFunctionListAdd_Private` (src/sys/dll/reg.c:232-276) makes a 32-byte node
(struct _n_PetscFunctionList: four pointers) and a copy of the name for each one, through
its static helper PetscFunctionListCreateNode_Private (unnamed in the stripped library).
MatCreate_SeqAIJ composes 1,880 of them. The fix target is
PetscFunctionListAdd_Private; `PetscMallocA` and `PetscMallocAlign` are PETSc's malloc
wrappers. docs/real-applications.md has the evidence."""
import subprocess

import pytest

from heapscope.symbolize.code import function_code
from helpers.real_programs import (busiest, cached_build, callgraph, pkg_config, ranked,
                                   record_as_a_user, require_version, size_counts, stacks, through)

pytestmark = pytest.mark.real
EX12 = "/usr/share/petsc/3.18/share/petsc/examples/src/snes/tutorials/ex12.c"
ARGS = ["-dm_plex_simplex", "0", "-dm_plex_box_faces", "16,16", "-bc_type", "dirichlet",
        "-petscspace_degree", "2"]
WRAPPERS = {"PetscMallocAlign", "PetscMallocA"}


@pytest.fixture(scope="module")
def petsc(tmp_path_factory):
    require_version("libpetsc-real3.18-dev", "3.18.5+dfsg1-1")
    flags = pkg_config("--cflags", "--libs", "PETSc")
    program = cached_build("petsc-snes-ex12", EX12,
                           ["mpicc", "-g", "-O1", "-o", "{out}", "{src}", *flags,
                            "-I/usr/include/hdf5/openmpi", "-lm"],
                           ["libpetsc-real3.18-dev", "libpetsc3.18-dev-examples",
                            "libopenmpi-dev"])
    tmp = tmp_path_factory.mktemp("petsc")
    record_as_a_user(tmp, [program, *ARGS], 32)
    return tmp


def test_busiest_size_is_32_bytes(heapscope, petsc):
    # the same in every run here; 539 of them are Open MPI's start-up (region [MPI]),
    # which depends on the host, hence a bound
    size, count = busiest(size_counts(heapscope, petsc / "counts"))
    assert size == 32 and abs(count - 7_381) <= 20, (size, count)


def test_composed_functions_make_most_of_them(heapscope, petsc):
    doc = stacks(heapscope, petsc / "stacks", 32)
    add = through(doc, lambda f: f["function"] == "PetscFunctionListAdd_Private")
    compose = through(doc, lambda f: f["function"] == "PetscObjectComposeFunction_Private")
    mat = through(doc, lambda f: f["function"] == "MatCreate_SeqAIJ")
    assert (compose, mat) == (5_416, 2_120) and 5_700 <= add <= 5_760, (compose, mat, add)
    lib = through(doc, lambda f: f["function"] == "PetscMallocAlign"
                  and f["module"].endswith("/libpetsc_real.so.3.18"))
    assert lib >= 0.9 * sum(g["count"] for g in doc["groups"])


def test_fix_target_is_function_list_add(heapscope, petsc):
    names = ranked(callgraph(heapscope, petsc / "stacks", 32))
    assert names[0] == "PetscFunctionListAdd_Private", names[:4]
    assert not WRAPPERS & set(names[:3])


def test_petsc_malloc_align_is_a_wrapper_by_its_code():
    """What the ranking reads of PetscMallocAlign's code (docs/ranking.md, rule 3): 42
    instructions; -O2 jumps back twice to the shared epilogue, which is not a loop; on
    its way back it calls posix_memalign, then memset when asked to clear."""
    require_version("libpetsc-real3.18-dev", "3.18.5+dfsg1-1")
    lib = "/usr/lib/petsc/lib/libpetsc_real.so.3.18"
    res = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True)
    address = next(int(line.split()[0], 16) for line in res.stdout.splitlines()
                   if line.endswith(" PetscMallocAlign"))
    code = function_code(lib, address)
    assert (code.start, code.small, code.loops, code.calls) == (
        address, True, False, ("memset", "posix_memalign"))
