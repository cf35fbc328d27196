"""A peer allocator placed before libheapscope.so in LD_PRELOAD serves malloc itself: the
recorder's hooks are never called. The recorder says so on stderr (instead of an empty
profile without a word), and puts itself first again in the LD_PRELOAD of the programs
that process execs (tests/programs/rec_forkexec.c: parent 9009 x2, forked child 9119 x3,
the image it execs 9229 x4)."""
import os
import subprocess

from heapscope.profile import read_profile

WARNING = "which comes before libheapscope.so"


def _run(native, program, preload, out):
    env = dict(os.environ, LD_PRELOAD=" ".join(str(p) for p in preload),
               HEAPSCOPE_OUTPUT_DIR=str(out))
    return subprocess.run([str(program), "inherit-env"], env=env, capture_output=True, text=True,
                          timeout=60)


def _sizes(out):
    found = {}
    for f in out.glob("*.hsp"):
        p = read_profile(f)
        for (_r, size), n in p.size_counts.items():
            if size in (9009, 9119, 9229):
                found[size] = found.get(size, 0) + n
    return found


def test_a_peer_allocator_first_is_warned_of(native, build, tmp_path):
    program = build("rec_forkexec.c")
    heapscope, peer = native / "lib" / "libheapscope.so", native / "lib" / "libhsmalloc.so"
    good = tmp_path / "good"
    good.mkdir()
    res = _run(native, program, [heapscope, peer], good)
    assert res.returncode == 0 and WARNING not in res.stderr
    assert _sizes(good) == {9009: 2, 9119: 3, 9229: 4}
    bad = tmp_path / "bad"
    bad.mkdir()
    res = _run(native, program, [peer, heapscope], bad)
    assert res.returncode == 0
    # said once, by the process that loaded it (its fork child does not start again)
    assert res.stderr.count(WARNING) == 1, res.stderr
    assert "libhsmalloc.so" in res.stderr
    # their mallocs went past the recorder; the exec'd image has libheapscope.so first
    assert _sizes(bad) == {9229: 4}
