"""gmsh 4.8.4 (Debian 12), 3-D mesh of a box with a spherical hole, one thread.

Busiest size: 24 bytes, 141,352 blocks a run (the same in every run). 56.5% of them are
the `std::vector<MVertex*>` of three vertices that the constructor
`MFace::MFace(MVertex*, MVertex*, MVertex*, MVertex*)` reserves for every triangle it
builds (Geo/MFace.cpp:59, `_v.reserve(v3 ? 4 : 3)`): a heap vector per face, built by
the thousand in the surface mesher and the Delaunay volume mesher. The fix is in the
constructor (a fixed array of four vertices), so MFace::MFace is the fix target; the
drivers above (`meshGFace::operator()`, `GFace::mesh`) carry more blocks only because
they also carry other kinds (laplaceSmoothing's SPoint2 vectors, Eigen's QR).
docs/real-applications.md has the evidence."""
import pytest

from helpers.real_programs import (allocating_frames, busiest, callgraph, copy_inputs,
                                   ranked, record_as_a_user, require_version, size_counts, stacks,
                                   through)

pytestmark = pytest.mark.real
MFACE = "MFace::MFace(MVertex*, MVertex*, MVertex*, MVertex*)"


@pytest.fixture(scope="module")
def gmsh(tmp_path_factory):
    require_version("gmsh", "4.8.4+ds2-3")
    tmp = tmp_path_factory.mktemp("gmsh")
    copy_inputs(tmp, "box.geo")
    cmd = ["gmsh", "-3", "box.geo", "-o", "box.msh", "-nt", "1"]
    record_as_a_user(tmp, cmd, 24)
    return tmp


def test_busiest_size_is_the_24_byte_vertex_vectors(heapscope, gmsh):
    counts = size_counts(heapscope, gmsh / "counts")
    assert busiest(counts) == (24, 141_352)
    assert (counts[3], counts[64]) == (82_689, 63_621)   # sortVertices, the Delaunay step


def test_mface_constructor_makes_most_of_them(heapscope, gmsh):
    doc = stacks(heapscope, gmsh / "stacks", 24)
    frames = allocating_frames(doc)
    (top, module), count = frames.most_common(1)[0]
    # the vector's reserve, inlined from <vector> into libgmsh, called by MFace::MFace
    assert (top, module, count) == ("std::vector<MVertex*, std::allocator<MVertex*> >"
                                    "::reserve(unsigned long)", "libgmsh.so.4.8", 79_803)
    assert through(doc, lambda f: f["function"] == MFACE) == 79_803


def test_every_24_byte_block_has_its_stack(heapscope, gmsh):
    # report counts 141,352; the stacks of the same run must account for all of them
    # (or say why some are missing)
    doc = stacks(heapscope, gmsh / "stacks", 24)
    counts = size_counts(heapscope, gmsh / "stacks")
    with_stacks = sum(g["count"] for g in doc["groups"])
    assert with_stacks == counts[24] or doc["not_recorded"], (with_stacks, counts[24])


def test_fix_target_is_mface_constructor(heapscope, gmsh):
    doc = callgraph(heapscope, gmsh / "stacks", 24)
    assert ranked(doc)[0] == MFACE, ranked(doc)[:5]
