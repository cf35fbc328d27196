"""hsmalloc's resident footprint against what a program holds (footprint.c): 4 KiB pages
resident in the segments of the program's blocks, counted with mincore."""
import os
import subprocess


def run(build, native, mode, env=None):
    lib = str(native / "lib")
    exe = build("../allocator/footprint.c", "-O1", "-pthread", "-L" + lib, "-Wl,-rpath," + lib,
                "-lhsmalloc", name="footprint")
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.update(env or {})
    res = subprocess.run([str(exe), mode], capture_output=True, text=True, env=full, timeout=60)
    assert res.returncode == 0, res.stderr
    w = res.stdout.split()
    return {w[i]: int(w[i + 1]) for i in range(1, len(w), 2)}


def test_a_size_with_an_exact_fixed_class_gets_one_set_of_pages(build, native):
    """1600 blocks of 64 bytes, allocated and freed 20 times by one thread: 64 takes the
    whole hot-size window, but the fixed class of 64 fits it exactly, so no hot class is
    made and the blocks stay on the fixed class's two slices: 32 pages of 4 KiB (100 KiB
    of blocks; its pages carved to the end over the rounds). Before, the hot class of 64
    took the blocks after the window and the fixed class kept the 16 pages it had carved
    during it: 48 pages."""
    assert run(build, native, "exact") == {"resident": 32, "hot": 0}
