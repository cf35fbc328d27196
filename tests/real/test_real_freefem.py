"""FreeFem++ 4.11 (Debian 12), P2 Poisson problem on a 60 x 60 square (7,200 triangles).

Busiest size: 10 bytes, 14,401 blocks. 14,400 are `KN<bool> Dop(last_operatortype)`, a
heap array of 10 flags (last_operatortype = 10, femlib/FESpace.hpp:50) that the element
routines build for every triangle: `Element_Op` (fflib/problem.cpp:5698, the matrix) and
`Element_rhs` (problem.cpp:7463, the right-hand side), 7,200 each. The flags depend on
the variational form only, not on the element: the fix is in those two functions (a
fixed-size array on the stack, or the flags computed once per form by their callers), so
they are the fix targets, tied; `AssembleVarForm`, the phase above both, is not where the
pattern is decided. FreeFem++ replaces operator new[]: the first frame is the program's
own operator, a wrapper. docs/real-applications.md has the evidence."""
import pytest

from helpers.real_programs import (allocating_frames, busiest, callgraph, copy_inputs,
                                   ranked, record_as_a_user, require_version, size_counts, stacks)

pytestmark = pytest.mark.real
ELEMENT_OP = "void Fem2D::Element_Op<double>(MatriceElementairePleine<double, Fem2D::FESpace>&, Fem2D::FElement const&, Fem2D::FElement const&, double*, int, int, void*, Fem2D::R2*)"
ELEMENT_RHS_PREFIX = "void Fem2D::Element_rhs<double>("


@pytest.fixture(scope="module")
def freefem(tmp_path_factory):
    require_version("freefem++", "4.11+dfsg1-3")
    tmp = tmp_path_factory.mktemp("freefem")
    copy_inputs(tmp, "poisson.edp")
    cmd = ["FreeFem++", "-nw", "-ne", "poisson.edp"]
    assert "integral" in record_as_a_user(tmp, cmd, 10).stdout
    return tmp


def test_busiest_size_is_ten_bytes_two_per_triangle(heapscope, freefem):
    assert busiest(size_counts(heapscope, freefem / "counts")) == (10, 14_401)
    doc = stacks(heapscope, freefem / "stacks", 10)
    assert sorted(count for g in doc["groups"] for count in
                  (t["count"] for t in g["stack_types"])) == [1, 7_200, 7_200]
    # FreeFem++'s own operator new[] (it counts its pointers) is the first frame
    frames = allocating_frames(doc, skip=())
    assert frames[("operator new[](unsigned long)", "FreeFem++")] == 14_401


def test_fix_targets_are_the_two_element_routines(heapscope, freefem):
    names = ranked(callgraph(heapscope, freefem / "stacks", 10))
    assert ELEMENT_OP in names[:2], names[:5]
    assert names[:2][1 - names[:2].index(ELEMENT_OP)].startswith(ELEMENT_RHS_PREFIX), names[:5]
