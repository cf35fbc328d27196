"""SUNDIALS 6.4 (Debian 12): its example arkode/C_serial/ark_heat1D_adapt.c (libsundials-dev),
the 1-D heat equation on a mesh adapted after every time step.

Busiest size: 24 bytes, 7,748 blocks: two per N_Vector cloned, its header (content, ops,
context: `N_VNewEmpty`) and its serial content (length, own_data, data:
`N_VCloneEmpty_Serial`). After each step the
example builds a new mesh and calls `ARKStepResize(arkode_mem, y, hscale, t, NULL, NULL)`
(ark_heat1D_adapt.c:260) without a resize function, so `arkResizeVec`
(src/arkode/arkode.c:1584-1593) destroys each of the integrator's vectors and clones a
new one (`N_VDestroy`, `N_VClone`): 5,032 of the blocks (65%). It is where the pattern
is decided (a resize function resizes in place); the clone chain `N_VClone` ->
`N_VClone_Serial` -> `N_VCloneEmpty_Serial` -> `N_VNewEmpty` is a constructor that passes
each call to one 24-byte allocation. The example's own re-creation of its linear solver
every step (`SUNLinSol_PCG`, line 265) is second (1,341). docs/real-applications.md has
the evidence."""
import pytest

from helpers.real_programs import (busiest, cached_build, callgraph, ranked, record_as_a_user,
                                   require_version, size_counts, stacks, through)

pytestmark = pytest.mark.real
EXAMPLE = "/usr/share/doc/libsundials-dev/examples/arkode/C_serial/ark_heat1D_adapt.c"
CLONE_CHAIN = {"N_VClone", "N_VClone_Serial", "N_VCloneEmpty_Serial", "N_VNewEmpty"}


@pytest.fixture(scope="module")
def sundials(tmp_path_factory):
    require_version("libsundials-dev", "6.4.1+dfsg1-3")
    program = cached_build("sundials-ark-heat1D-adapt", EXAMPLE,
                           ["gcc", "-g", "-O1", "-o", "{out}", "{src}", "-lsundials_arkode",
                            "-lsundials_nvecserial", "-lm"], ["libsundials-dev"])
    tmp = tmp_path_factory.mktemp("sundials")
    record_as_a_user(tmp, [program], 24)
    return tmp


def test_busiest_size_is_24_bytes(heapscope, sundials):
    counts = size_counts(heapscope, sundials / "counts")
    assert busiest(counts) == (24, 7_748) and counts[448] == 3_803   # 448: each vector's ops table


def test_resizing_clones_every_vector(heapscope, sundials):
    doc = stacks(heapscope, sundials / "stacks", 24)
    assert through(doc, lambda f: f["function"] == "arkResizeVec") == 5_032
    assert through(doc, lambda f: f["function"] == "SUNLinSol_PCG") == 1_341
    assert through(doc, lambda f: f["function"] == "N_VNewEmpty") == 3_725


def test_fix_target_is_ark_resize_vec(heapscope, sundials):
    names = ranked(callgraph(heapscope, sundials / "stacks", 24))
    assert names[0] == "arkResizeVec", names[:5]
    assert not CLONE_CHAIN & set(names[:2])
