"""Exact stacks through the unwind cache (src/recorder/stacks/unwind_cache.c) are the
stacks libunwind finds alone (HEAPSCOPE_UNWIND_CACHE=0): the same stack trace types
with the same counts, on the test programs and on the C++ churn workload, whose
loops revisit the same call sites at the same depths (the cache's hits), and on a
program whose call sites recur at other depths and through other callers."""
import json

import pytest

from heapscope.bench.workloads import BY_NAME


def types(heapscope, out, program, *args, cache=True):
    env = None if cache else {"HEAPSCOPE_UNWIND_CACHE": "0"}
    heapscope("record", "-o", out, "--sizes", "all", "--", program, *args, env=env)
    doc = json.loads(heapscope("stacks", out, "--size", "all", "--top", "0",
                               "--format", "json").stdout)
    return sorted((g["region"], g["size"], t["count"],
                   tuple((f["function"], f["file"], f["line"]) for f in t["frames"]))
                  for g in doc["groups"] for t in g["stack_types"])


@pytest.mark.parametrize("source,args", [("stk_paths.cpp", ()), ("rec_stacks.c", ()),
                                         ("trk_cxx.cpp", ()), ("unw_depths.c", ())])
def test_same_types_as_libunwind_alone(heapscope, build, tmp_path, source, args):
    program = build(source, "-DHEAPSCOPE_WEAK")
    cached = types(heapscope, tmp_path / "cached", program, *args)
    alone = types(heapscope, tmp_path / "alone", program, *args, cache=False)
    assert cached == alone
    assert sum(t[2] for t in cached) >= 14


def test_many_sizes_through_three_callers(heapscope, build, tmp_path):
    """unw_depths.c: leaf_sized reached from three callers at one depth, 8 sizes each;
    the exact counts per (caller, size) are known: 40 from caller_1, 20 from the others."""
    program = build("unw_depths.c", "-DHEAPSCOPE_WEAK")
    cached = types(heapscope, tmp_path / "cached", program)
    got = {}
    for _, size, count, frames in cached:
        names = [f[0] for f in frames]
        if "leaf_sized" in names:
            caller = names[names.index("leaf_sized") + 1]
            got[(caller, size)] = got.get((caller, size), 0) + count
    want = {}
    for k in range(8):
        want[("caller_1", 100 + 16 * k)] = 40
        want[("caller_2", 100 + 16 * k)] = 20
        want[("caller_3", 100 + 16 * k)] = 20
    assert got == want


def test_same_types_on_the_cxx_churn_workload(heapscope, tmp_path):
    program = str(BY_NAME["cxx-churn"].path)
    args = ("--ops", "20000", "--working-set", "512")
    cached = types(heapscope, tmp_path / "cached", program, *args)
    alone = types(heapscope, tmp_path / "alone", program, *args, cache=False)
    assert cached == alone
    assert sum(t[2] for t in cached) > 150_000
