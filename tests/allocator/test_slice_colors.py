"""Where segments keep their slice tables (`slice_colors.c`): free reads a segment's table
for every block, and segments are 2 MiB-aligned, so tables at one offset in every header
all fell in the same four sets of a 32 KiB 8-way L1 and evicted each other (a fifth of
free's table reads missed in the live hand-over, under cachegrind). Each segment keeps
its table at the place of its colour (its 2 MiB unit modulo 8): segments of different
colours have their tables in different sets."""
import os
import subprocess


def test_slice_tables_of_segments_fall_in_different_l1_sets(build, native):
    lib = str(native / "lib")
    exe = build("../allocator/slice_colors.c", "-O1", "-L" + lib, "-Wl,-rpath," + lib,
                "-lhsmalloc", name="slice_colors")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    res = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    w = res.stdout.split()
    got = {w[i]: int(w[i + 1]) for i in range(0, len(w), 2)}
    assert got["segments"] >= 8, res.stdout  # the table found in every segment's header
    assert got["units"] >= 4, res.stdout  # the segments have several colours
    # one set per colour: no two colours' tables share a line's set
    assert got["sets"] == got["units"], res.stdout
