"""Secure mode's drain of a heap's queue of other threads' frees fetches a 4 KiB area
of the queue's blocks ahead of its walk when two blocks in a row lie in it (remote.c,
fetch_ahead): fresh blocks are handed out in random order within each 4 KiB carved, so
the walk's links jump about an area, and each one missed the cache in turn
(xmalloc-test's producer spent 40% of its secure run's samples on that one load).
secure_drain.c: blocks of 64 bytes freed by a thread without a heap (each pushed home
alone), then drained by their owner."""
import os
import subprocess


def figures(build, native, env):
    lib = str(native / "lib")
    exe = build("../allocator/secure_drain.c", "-O1", "-pthread", "-L" + lib,
                "-Wl,-rpath," + lib, "-lhsmalloc", name="secure_drain")
    full = dict(os.environ)
    for var in ("LD_PRELOAD", "HSMALLOC_SECURE"):
        full.pop(var, None)
    full.update(env)
    res = subprocess.run([str(exe)], capture_output=True, text=True, env=full, timeout=60)
    assert res.returncode == 0, res.stderr
    return {w[0]: {w[i]: int(w[i + 1]) for i in range(1, len(w), 2)}
            for w in (line.split() for line in res.stdout.splitlines())}


def test_a_secure_drain_fetches_each_dense_area_of_its_queue_once(build, native):
    """Every block of 8 areas (about 51 blocks of 80 bytes an area), freed area by area:
    all drained, each area fetched once (at its second block), 8 in all, not once a
    block. 20 blocks in 20 areas: all 20 drained, no area fetched (no two blocks in a
    row share one: 64 lines fetched for each block would cost a scattered queue more
    than its misses). (On main the heap's drain_areas does not exist: nothing is
    fetched ahead.)"""
    f = figures(build, native, {"HSMALLOC_SECURE": "1"})
    one, grouped = f["one"], f["grouped"]
    assert grouped["areas"] == 8 and grouped["blocks"] >= 8 * 40
    assert (grouped["drained"], grouped["fetched"]) == (grouped["blocks"], 8)
    assert (one["blocks"], one["areas"], one["drained"], one["fetched"]) == (20, 20, 20, 0)


def test_the_default_mode_drain_fetches_nothing_ahead(build, native):
    """The default mode's lists follow the carving order, which the hardware's stream
    prefetch follows: its drains fetch no area."""
    f = figures(build, native, {})
    for name in ("one", "grouped"):
        assert f[name]["drained"] >= 1
        assert f[name]["fetched"] == 0
    assert (f["one"]["blocks"], f["grouped"]["areas"]) == (20, 8)
