"""`heapscope temporaries` per size on tests/programs/rep_temporaries.c: a size whose
temporaries come from several stack trace types (and one of its types makes none) counts
every type, with the exact allocations and temporaries of each."""
import json

import pytest

from helpers.known_programs import user_frames


@pytest.fixture(scope="module")
def doc(build, heapscope, tmp_path_factory):
    exe = build("rep_temporaries.c")
    out = tmp_path_factory.mktemp("rep-temporaries")
    heapscope("record", "--track", "--sizes", "all", "-o", out, "--", exe)
    return json.loads(heapscope("temporaries", out, "--size", "40,72", "--format", "json").stdout)


def test_sizes_count_every_stack_type(doc):
    assert [(s["size"], s["allocs"], s["temporaries"], s["types"]) for s in doc["sizes"]] == \
        [(40, 65, 60, 4), (72, 10, 10, 2)]
    assert doc["totals"] == dict(allocs=75, temporaries=70, share=70 / 75, types_with_temporaries=5)


def test_stack_types_ranked_by_temporaries(doc):
    assert [(t["size"], user_frames(t)[1][0], t["allocs"], t["temporaries"]) for t in doc["stack_types"]] == \
        [(40, "temp_c", 30, 30), (40, "temp_b", 20, 20), (40, "temp_a", 10, 10),
         (72, "temp_d", 7, 7), (72, "temp_e", 3, 3)]
