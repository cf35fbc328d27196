"""`heapscope callgraph` on tests/programs/ana_paths.cpp, whose 12-byte blocks in region
"local" come along four known call paths: assemble 100, boundary 30 and refine 7 through
Mesh::getElem (the user function nearest the allocation), neighbours 50 not through it,
all under the phase driver run_local_phase (the trunk: drawn, not ranked)."""
import json

import pytest


@pytest.fixture(scope="module")
def recorded(build, heapscope, tmp_path_factory):
    out = tmp_path_factory.mktemp("ana") / "prof"
    heapscope("record", "-o", out, "--sizes", "12", "--regions", "local", "--",
              build("ana_paths.cpp"))
    return out


def test_getelem_ranks_first_with_the_three_paths_through_it(heapscope, recorded):
    doc = json.loads(heapscope("callgraph", recorded, "--size", "12", "--region", "local",
                               "--format", "json").stdout)
    assert (doc["types"], doc["count"], doc["bytes"]) == (4, 187, 187 * 12)
    ranked = [(r["function"], r["types"], r["count"]) for r in doc["ranking"]]
    assert ranked[0] == ("Mesh::getElem(int) const", 3, 137)
    assert set(ranked[1:]) == {("assemble(Mesh const&)", 1, 100),
                               ("neighbours(Mesh const&)", 1, 50),
                               ("boundary(Mesh const&)", 1, 30),
                               ("refine(Mesh const&)", 1, 7)}
    assert "run_local_phase(Mesh const&)" not in {r["function"] for r in doc["ranking"]}
