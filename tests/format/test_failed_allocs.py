"""Allocation calls that fail are counted apart ("failed: N", per API and requested size)
and are in no size row, no stack type and no byte total (tests/programs/fmt_failed.c
makes known failing calls: huge mallocs, a calloc whose product overflows, a
posix_memalign with a bad alignment, a realloc and a memalign that cannot be served,
a nothrow operator new; and malloc(512) until it fails under an address-space limit,
on the recorder's fast path)."""
import json

import pytest

from heapscope.profile import framing, load_profiles
from heapscope.profile import format as fmt

MAX = 2 ** 64 - 1
FAILED = {("malloc", MAX): 2, ("calloc", MAX): 1, ("posix_memalign", 64): 1,
          ("realloc", MAX - 4096): 1, ("memalign", MAX - 64): 1, ("aligned_alloc", MAX - 127): 1}
FAILED_CXX = {**FAILED, ("operator_new", MAX // 2): 1}


def record(heapscope, tmp_path, exe, *args, options=()):
    out = tmp_path / "run"
    res = heapscope("record", "-o", out, *options, "--", exe, *args)
    [p] = load_profiles([out])
    return res, p


@pytest.mark.parametrize("cxx", [False, True], ids=["c", "cxx"])
def test_failed_calls_counted_apart(heapscope, build, tmp_path, cxx):
    exe = build("fmt_failed.c", "-Wno-alloc-size-larger-than", cxx=cxx, name=f"fmt_failed_{cxx}")
    res, p = record(heapscope, tmp_path, exe, options=("--sizes", "all"))
    expected = FAILED_CXX if cxx else FAILED
    assert res.stdout.strip() == f"failed {sum(expected.values())}"
    assert {(api, size): n for (r, api, size), n in p.failed_allocs.items()} == expected
    assert {r for r, _api, _size in p.failed_allocs} == {"(none)"}
    assert p.api_counts[("(none)", "failed")] == sum(expected.values())
    # the calls that succeeded are counted; no failed size is in any row or stack type
    sizes = {s: n for (_r, s), n in p.size_counts.items()}
    assert (sizes[40], sizes[80], sizes[256]) == (3, 1, 1)
    assert max(sizes) < 2 ** 32 and max(t.size for t in p.stack_types) < 2 ** 32
    # the C writer's chunk decodes whole
    frame = framing.parse(open(p.path, "rb").read(), p.path)
    [chunk] = [c for c in frame.chunks if c.type == fmt.FAILED_ALLOCS]
    assert fmt.CODECS[fmt.FAILED_ALLOCS].encode(fmt.CODECS[fmt.FAILED_ALLOCS].decode(chunk.payload, whole=True)) \
        == bytes(chunk.payload)

    doc = json.loads(heapscope("report", "--format", "json", "--top", "0", p.path).stdout)
    assert doc["failed_calls"] == sum(expected.values())
    assert {(api, s["size"]): s["calls"] for api, f in doc["failed"]["(none)"].items()
            for s in f["sizes"]} == expected
    assert doc["totals"]["(none)"]["bytes"] == sum(r["total_bytes"] for r in doc["sizes"]) < 2 ** 32
    text = heapscope("report", p.path).stdout
    assert f"Failed allocation calls: {sum(expected.values())} (no block returned; in no size row " \
           f"or byte total)" in text
    assert any(line.split() == ["(none)", "posix_memalign", "1", "64", "x1"] for line in text.splitlines())
    assert "18,446,744,073,709,551,615" not in text.split("Failed allocation calls")[0]


@pytest.mark.parametrize("cxx", [False, True], ids=["c", "cxx"])
def test_fast_path_failure_is_taken_back(heapscope, build, tmp_path, cxx):
    """malloc(512), calloc(1, 600), realloc(p, 600) and (C++) new char[512], counted
    before the real call (the counts-only fast paths) and failing: the size count is
    taken back, the failure counted apart."""
    exe = build("fmt_failed.c", "-Wno-alloc-size-larger-than", cxx=cxx, name=f"fmt_failed_{cxx}")
    res, p = record(heapscope, tmp_path, exe, "oom")
    ok, failed, new_failed, calloc_failed, realloc_failed = \
        (int(w) for w in res.stdout.split()[1::2])
    assert (failed, new_failed, calloc_failed, realloc_failed) == (3, 2 if cxx else 0, 1, 1)
    assert p.size_counts[("(none)", 512)] == ok
    assert ("(none)", 600) not in p.size_counts
    expected = {("(none)", "malloc", 512): 3, ("(none)", "calloc", 600): 1,
                ("(none)", "realloc", 600): 1}
    if cxx:
        expected[("(none)", "operator_new", 512)] = 2
    assert p.failed_allocs == expected
    assert p.api_counts[("(none)", "failed")] == 5 + new_failed
