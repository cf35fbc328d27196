"""heapscope.h as the recorder implements it: the calls of Gomes et al.'s profiling
library through the stub library, and the Fortran module."""
import os
import subprocess

from heapscope.profile import read_profile

from conftest import PROGRAMS, require


def link_stub(native):
    lib = native / "lib"
    return ["-L", str(lib), "-Wl,-rpath," + str(lib), "-lheapscope_stub"]


def only_profile(out):
    [path] = out.glob("heapscope.*.hsp")
    return read_profile(path)


def test_seed_calls_map_onto_regions_dump_and_reset(heapscope, build, native, tmp_path):
    program = build("rec_seed.c", *link_stub(native), name="rec_seed")
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    alone = subprocess.run([program], capture_output=True, text=True, env=env, timeout=60)
    assert alone.returncode == 0 and alone.stdout == "active=0\n"  # the stub's no-ops

    res = heapscope("record", "-o", tmp_path / "plain", "--", program)
    assert res.stdout == "active=1\n"  # the recorder's definitions win over the stub's
    p = only_profile(tmp_path / "plain")
    assert p.size_counts[("(none)", 16016)] == 2
    assert p.size_counts[("size_profiling", 16016)] == 3

    heapscope("record", "-o", tmp_path / "reset", "--sizes", "16016", "--", program, "reset")
    p = only_profile(tmp_path / "reset")
    assert {k: n for k, n in p.size_counts.items() if k[1] == 16016} == {("size_profiling", 16016): 4}
    # the stack types are reset too: only the 4 after the reset remain
    assert [(t.region, t.count) for t in p.stack_types] == [("size_profiling", 4)]


def test_seed_calls_built_weak_run_with_and_without_the_recorder(heapscope, build, tmp_path):
    """-DHEAPSCOPE_WEAK and no library: every call of heapscope.h, the paper's
    init_size_profiling() & co. included, does nothing without the recorder (they
    called a NULL weak symbol: SIGSEGV) and reaches the recorder under it."""
    program = build("rec_seed.c", "-DHEAPSCOPE_WEAK", name="rec_seed_weak")
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    for mode in ([], ["reset"]):
        alone = subprocess.run([program, *mode], capture_output=True, text=True, env=env,
                               timeout=60)
        assert (alone.returncode, alone.stdout) == (0, "active=0\n"), alone
    res = heapscope("record", "-o", tmp_path / "weak", "--", program)
    assert res.stdout == "active=1\n"
    p = only_profile(tmp_path / "weak")
    assert p.size_counts[("(none)", 16016)] == 2
    assert p.size_counts[("size_profiling", 16016)] == 3


def test_fortran_module_regions(heapscope, native, tmp_path):
    require("gfortran")
    program = tmp_path / "rec_fortran"
    subprocess.run(["gfortran", "-g", "-J", str(tmp_path), "-o", str(program),
                    str(native / "include" / "heapscope.f90"), str(PROGRAMS / "rec_fortran.f90"),
                    *link_stub(native)], check=True, cwd=tmp_path)
    res = heapscope("record", "-o", tmp_path / "out", "--", program)
    assert "fortran done" in res.stdout
    p = only_profile(tmp_path / "out")
    assert p.size_counts[("assemble", 20000)] == 6
    assert p.size_counts[("assemble/solve", 20000)] == 2
