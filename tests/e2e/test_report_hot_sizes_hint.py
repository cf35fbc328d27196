"""`heapscope report --hot-sizes-hint`: the HSMALLOC_HOT_SIZES line for the size classes
that take the largest shares of a recording (tests/programs/diff_variant.c: 300 blocks
of 12 B and 20 of 16 B share the 16-byte class, 100 of 40 B take the 48-byte class
(malloc's classes are 16-byte aligned by default), 50 of 64 B the 64-byte class: 470
allocations in all), the same choice `heapscope run --hot-sizes` makes."""
import json

import pytest

from conftest import compile_program


@pytest.fixture(scope="module")
def recording(native, heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("hint")
    exe = compile_program(native, "diff_variant.c", root / "prog")
    heapscope("record", "-o", root / "rec", "--", exe)
    return root / "rec"


def test_hint_names_the_classes_of_the_hottest_sizes(recording, heapscope):
    doc = json.loads(heapscope("report", recording, "--hot-sizes-hint", "--format", "json").stdout)
    hint = doc["hot_sizes_hint"]
    assert hint["total_allocations"] == 470
    assert [(h["size"], h["count"], h["sizes"]) for h in hint["hot_sizes"]] == [
        (16, 320, [12, 16]), (48, 100, [40]), (64, 50, [64])]
    assert hint["variable"] == {"HSMALLOC_HOT_SIZES": "16,48,64"}
    text = heapscope("report", recording, "--hot-sizes-hint").stdout
    assert "3 classes take 100.0% of the 470 allocations" in text
    assert "export HSMALLOC_HOT_SIZES=16,48,64" in text


def test_hint_is_the_size_view_only(recording, heapscope):
    res = heapscope("report", recording, "--by", "library", "--hot-sizes-hint", check=False)
    assert res.returncode == 2 and "--hot-sizes-hint applies to --by size" in res.stderr
