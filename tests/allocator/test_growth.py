"""Resident memory of arrays grown by copies (FreeFem++'s pattern: fresh memory must
not pile up on top of freed memory kept idle), and purged huge mappings reused."""
import os
import subprocess

MIB = 1 << 20


def figures(build, native, mode, env=None):
    lib = str(native / "lib")
    exe = build("../allocator/growth.c", "-O1", "-L" + lib, "-Wl,-rpath," + lib, "-lhsmalloc",
                name="growth")
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.pop("HSMALLOC_DECAY_MS", None)
    full.update(env or {})
    res = subprocess.run([str(exe), mode], capture_output=True, text=True, env=full, timeout=120)
    assert res.returncode == 0, res.stderr
    words = res.stdout.split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


def test_growth_by_copies_keeps_rss_at_what_is_live(build, native):
    """Three series of blocks growing 1.25 -> 15 MiB by 1.2: the freed blocks (huge
    mappings of ever larger sizes, never reused) used to stay resident in the huge
    cache for the decay delay (8 s with room): 85 MB resident for 31 MB live. Now each
    new mapping gives back as much idle memory above the 2 MiB budget."""
    f = figures(build, native, "growth")
    live = f["live_peak"]
    assert 29 * MIB < live < 30 * MIB
    # the resident set grows by what is live, plus at most the idle budget (2 MiB)
    assert f["rss_peak"] <= live + 2 * MIB + MIB // 2
    # the spy's committed memory: live mappings (sizes rounded up by at most 1/8)
    # plus the budget
    assert f["committed_peak"] <= live * 9 // 8 + 2 * MIB
    assert f["growth_purged"] > 100 * MIB


def test_purged_huge_mapping_is_reused(build, native):
    """HSMALLOC_DECAY_MS=0 purges a freed huge mapping at once: the purge zeroed its
    header, where the cache read its size, so it was never reused and its unmapping
    was munmap(NULL, 0): every allocation mapped 4 MiB more (420 MB after 100)."""
    f = figures(build, native, "reuse", {"HSMALLOC_DECAY_MS": "0"})
    assert f["same"] == 100
    assert f["reserved_peak"] <= 5 * MIB
