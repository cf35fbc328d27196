"""The heapscope recorder on top of hsmalloc counts exactly what it counts on glibc:
`heapscope record --allocator hsmalloc` then `heapscope report --format json`."""
import json
import os

from heapscope.native import program


def recorded_report(heapscope, tmp_path, allocator, env=None):
    # heapscope itself runs without any preload the caller may have set: the
    # recorded program gets exactly the allocator asked for
    env = dict(env or {}, LD_PRELOAD="")
    out = tmp_path / allocator
    exe = program("hs-wl-hot-odd")
    res = heapscope("record", "-o", out, "--allocator", allocator, "--", exe, "--rounds", "300",
                    env=env)
    checksum = [l for l in res.stdout.splitlines() if l.startswith("checksum:")]
    report = json.loads(heapscope("report", out, "--top", "0", "--format", "json",
                                  env={"LD_PRELOAD": ""}).stdout)   # every size
    return report, checksum


def test_record_on_hsmalloc_counts_as_on_glibc(heapscope, native, tmp_path):
    stats = tmp_path / "hsmalloc-stats.json"
    on_glibc, sum_glibc = recorded_report(heapscope, tmp_path, "glibc")
    on_hs, sum_hs = recorded_report(heapscope, tmp_path, "hsmalloc",
                                    env={"HSMALLOC_STATS": "json", "HSMALLOC_STATS_FILE": str(stats)})
    assert sum_hs == sum_glibc and sum_hs
    # 300 batches of 200 blocks of 64..180 bytes, and the same few of the program's own
    (total,) = on_hs["totals"].values()
    assert 60000 <= total["count"] <= 60010
    for key in ("totals", "api", "sizes", "distinct_sizes"):
        assert on_hs[key] == on_glibc[key], key
    sizes = {row["size"] for row in on_hs["sizes"]}
    assert set(range(64, 181)) <= sizes
    # and hsmalloc really served them: at least the program's blocks went through it
    served = json.loads(stats.read_text())
    assert served["allocs"] >= 60000
