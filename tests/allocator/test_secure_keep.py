"""Secure mode keeps a page that comes back empty for reuse (page.c, secure_keep): its
blocks are handed out again from its list, checked, instead of the page going back to
its segment and being carved again (a shuffle, an encoded link and a mark per block:
xmalloc-test carved 0.8 fresh blocks per allocation). secure_keep.c: 5000 blocks of 48
bytes (5 pages of class 64 in secure mode) freed by another thread, drained home, then
5000 again."""
import os
import subprocess

PAGE = 64 * 1024


def figures(build, native, env):
    lib = str(native / "lib")
    exe = build("../allocator/secure_keep.c", "-O1", "-pthread", "-L" + lib,
                "-Wl,-rpath," + lib, "-lhsmalloc", name="secure_keep")
    full = dict(os.environ)
    for var in ("LD_PRELOAD", "HSMALLOC_DECAY_MS", "HSMALLOC_SECURE"):
        full.pop(var, None)
    full.update(env)
    res = subprocess.run([str(exe)], capture_output=True, text=True, env=full, timeout=60)
    assert res.returncode == 0, res.stderr
    return {w[0]: int(w[1]) for w in (line.split() for line in res.stdout.splitlines())}


def test_secure_mode_reuses_the_pages_that_came_back_empty(build, native):
    """Every block of the second 5000 lies in the first 5000's 5 pages, and the second
    round takes no page: the 5 empty pages were kept (before: 4 pages went back to
    their segment at the drain, and the second round carved 4 pages again, only 4096
    of its blocks in the first round's pages)."""
    f = figures(build, native, {"HSMALLOC_SECURE": "1"})
    assert f["round1"] == 5 * PAGE
    assert f["same"] == 5000
    assert f["drained"] == f["round2"]
    assert f["drained"] >= f["round1"]


def test_secure_mode_gives_empty_pages_back_at_once_with_decay_0(build, native):
    """HSMALLOC_DECAY_MS=0 asks for memory back at once: the empty pages are not kept
    (the drain leaves fewer page bytes than the first round held)."""
    f = figures(build, native, {"HSMALLOC_SECURE": "1", "HSMALLOC_DECAY_MS": "0"})
    assert f["round1"] == 5 * PAGE
    assert f["drained"] < f["round1"]
    assert f["same"] < 5000
