"""hsmalloc's API contract: the C suite and the C++ operators, under LD_PRELOAD and
linked directly, and with glibc as the reference the suite itself is checked against."""
import os
import subprocess

import pytest

ALLOC = "../allocator/"


@pytest.fixture(scope="module")
def hsmalloc(native):
    lib = native / "lib" / "libhsmalloc.so"
    assert lib.exists(), f"{lib} not built"
    return lib


def run(exe, *args, preload=None, env=None):
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    if preload:
        full["LD_PRELOAD"] = str(preload)
    full.update(env or {})
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=full, timeout=120)


def linked_flags(native):
    lib = str(native / "lib")
    return ("-L" + lib, "-Wl,-rpath," + lib, "-lhsmalloc", "-ldl")


def checks_passed(res):
    assert res.returncode == 0, res.stderr
    first = res.stdout.split()
    assert first[0] == "ok", res.stdout
    return int(first[1])


def test_api_suite_glibc_reference(build):
    """The suite's expectations hold for glibc itself (so they test the contract)."""
    exe = build(ALLOC + "api_suite.c", "-ldl", name="api_suite")
    assert checks_passed(run(exe)) >= 2900


def test_api_suite_preloaded(build, hsmalloc):
    exe = build(ALLOC + "api_suite.c", "-ldl", name="api_suite")
    # "owned": every block checked comes from hsmalloc, not glibc
    assert checks_passed(run(exe, "owned", preload=hsmalloc)) >= 2900


@pytest.mark.parametrize("packed", ["0", "new", "1", "all"])
def test_api_suite_with_each_packed_setting(build, hsmalloc, packed):
    """By default (and with 0 or new) every malloc above 8 bytes is 16-aligned, as
    glibc's; HSMALLOC_PACKED=1 or all packs 16k+1 .. 16k+8 (8-aligned: the suite checks
    the rule it reads from the same variable, and that packed blocks fall on both halves
    of 16 bytes)."""
    exe = build(ALLOC + "api_suite.c", "-ldl", name="api_suite")
    assert checks_passed(run(exe, "owned", preload=hsmalloc,
                             env={"HSMALLOC_PACKED": packed})) >= 2900


@pytest.mark.parametrize("value", ["2", "yes", "ALL", " 1"])
def test_a_bad_packed_setting_is_one_warning_and_the_default(build, hsmalloc, value):
    """Anything but 0, new, 1 or all: one line on stderr, and malloc 16-aligned (the
    suite's rule for a value it does not know either)."""
    exe = build(ALLOC + "api_suite.c", "-ldl", name="api_suite")
    res = run(exe, "owned", preload=hsmalloc, env={"HSMALLOC_PACKED": value})
    assert checks_passed(res) >= 2900
    assert res.stderr == f"hsmalloc: HSMALLOC_PACKED={value} is not 0, new, 1 or all; using new\n"


def test_api_suite_linked(build, native):
    exe = build(ALLOC + "api_suite.c", *linked_flags(native), name="api_suite_linked")
    needed = subprocess.run(["readelf", "-d", str(exe)], capture_output=True, text=True).stdout
    assert "libhsmalloc.so" in needed
    assert checks_passed(run(exe, "owned")) >= 2900


def test_library_needs_no_cxx_runtime(hsmalloc):
    needed = subprocess.run(["readelf", "-d", str(hsmalloc)], capture_output=True, text=True).stdout
    assert "libstdc++" not in needed
    exported = subprocess.run(["nm", "-D", "--defined-only", str(hsmalloc)],
                              capture_output=True, text=True).stdout.split()
    for name in ["malloc", "free", "calloc", "realloc", "reallocarray", "posix_memalign",
                 "aligned_alloc", "memalign", "valloc", "pvalloc", "malloc_usable_size", "cfree",
                 "__libc_malloc", "__libc_free", "__libc_calloc", "__libc_realloc",
                 "__libc_memalign", "__libc_valloc", "__libc_pvalloc", "__posix_memalign",
                 "free_sized", "free_aligned_sized", "mallinfo", "mallinfo2", "mallopt",
                 "malloc_trim", "malloc_stats", "malloc_info",
                 "_Znwm", "_Znam", "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm",
                 "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
                 "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
                 "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
                 "_ZdlPvSt11align_val_t", "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t",
                 "_ZdaPvmSt11align_val_t", "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t",
                 "_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t",
                 "hsmalloc_stats_print", "hsmalloc_stats_print_json", "hsmalloc_stats_get"]:
        assert name in exported, name
    # internals (hsm_*) stay hidden
    assert not any(sym.startswith(("hsm_", "hs_")) for sym in exported)


@pytest.mark.parametrize("mode", ["preload", "linked"])
def test_cxx_operators(build, native, hsmalloc, mode):
    if mode == "preload":
        exe = build(ALLOC + "cxx_ops.cpp", "-std=c++17", "-ldl", name="cxx_ops")
        res = run(exe, "owned", preload=hsmalloc)
    else:
        exe = build(ALLOC + "cxx_ops.cpp", "-std=c++17", *linked_flags(native), name="cxx_ops_linked")
        res = run(exe, "owned")
    assert res.returncode == 0, res.stderr
    # the handler ran until it removed itself (3 calls), then std::bad_alloc was thrown
    assert res.stdout.split()[2] == "handler_calls=3"
    assert int(res.stdout.split()[1]) >= 90


def test_glibc_pointers_are_handed_back(build, native, hsmalloc):
    """Blocks from glibc's own malloc, freed/realloc'ed through hsmalloc: no crash,
    contents kept, and each one counted as a foreign free."""
    exe = build(ALLOC + "foreign.c", "-ldl", name="foreign")
    res = run(exe, preload=hsmalloc)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok foreign=100"


def test_api_suite_returning_memory_at_once(build, hsmalloc):
    """The same contract when freed memory goes back to the OS at once and no free
    segment is cached (every path through purge and unmap is taken)."""
    exe = build(ALLOC + "api_suite.c", "-ldl", name="api_suite")
    res = run(exe, preload=hsmalloc, env={"HSMALLOC_DECAY_MS": "0", "HSMALLOC_CACHE_SEGMENTS": "0"})
    assert checks_passed(res) >= 2900


@pytest.mark.parametrize("packed, aborts", [(None, False), ("new", False), ("1", True)])
def test_eigen_takes_mallocs_16_byte_alignment(build, hsmalloc, packed, aborts):
    """Eigen asserts malloc's 16-byte alignment (gmsh aborted under hsmalloc while malloc
    was packed by default): 241 sizes through Eigen's own allocator pass by default and
    with HSMALLOC_PACKED=new, and abort with malloc on the packed classes."""
    exe = build(ALLOC + "eigen_malloc.cpp", "-I/usr/include/eigen3", name="eigen_malloc")
    env = {k: v for k, v in os.environ.items() if k != "HSMALLOC_PACKED"}
    env["LD_PRELOAD"] = str(hsmalloc)
    if packed is not None:
        env["HSMALLOC_PACKED"] = packed
    res = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
    if aborts:
        assert res.returncode == -6 and "unaligned pointer" in res.stderr
    else:
        assert res.returncode == 0 and res.stdout.split() == ["ok", "241", "8"], res.stderr
