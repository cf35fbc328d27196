"""Exact counts per size, region and API from programs with known allocations,
recorded with `heapscope record` on glibc and on each peer allocator.

The programs (tests/programs/rec_*.c*) say in comments what they allocate; the
sizes are odd enough that nothing else in the process asks for them.
"""
import os
from pathlib import Path

import pytest

from heapscope.allocators import PEERS, find_allocator
from heapscope.profile import read_profile

ALLOCATORS = ["glibc", "jemalloc", "tcmalloc", "mimalloc", "hsmalloc"]


def record(heapscope, out: Path, *cmd, options=(), env=None):
    """Run `heapscope record` and return the profiles it wrote, oldest pid first."""
    res = heapscope("record", "-o", out, *options, "--", *cmd, env=env)
    files = sorted(out.glob("heapscope.*.hsp"))
    assert files, f"no profile written\n{res.stderr}"
    assert f"in {out.resolve()}" in res.stderr.splitlines()[-1]
    record.stdout = res.stdout
    return [read_profile(f) for f in files]


def check_installed(allocator):
    if allocator == "hsmalloc":
        assert find_allocator(allocator) is not None, "libhsmalloc.so is not built"
    elif allocator != "glibc":
        assert find_allocator(allocator) is not None, \
            f"{allocator} missing: apt-get install {PEERS[allocator][1]}"


def sizes_in(profile, region):
    return {size: n for (r, size), n in profile.size_counts.items() if r == region}


def apis_in(profile, region):
    return {api: n for (r, api), n in profile.api_counts.items() if r == region}


@pytest.fixture(scope="module")
def counts_program(build):
    return build("rec_counts.c", "-DHEAPSCOPE_WEAK", "-pthread")


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_c_counts_per_size_region_and_api(heapscope, counts_program, tmp_path, allocator):
    check_installed(allocator)
    [p] = record(heapscope, tmp_path, counts_program, options=["--allocator", allocator])
    # realloc(p, 0) returns NULL on glibc, a new minimal block (freed later) on mimalloc
    realloc0_block = int(record.stdout.split("realloc0=")[1].split()[0])
    assert p.complete and p.snapshot_reason == "exit"
    assert p.exe == str(counts_program.resolve())
    paths = {r.path for r in p.regions.values()}
    assert {"(none)", "phase1", "phase1/inner", "phase2", "phase2/inner", "apis", "parallel",
            "parallel/mine", "reset"} <= paths

    assert sizes_in(p, "phase1") == {1001: 13}
    assert sizes_in(p, "phase1/inner") == {2002: 5}
    assert sizes_in(p, "phase2/inner") == {2002: 7}
    assert sizes_in(p, "phase2") == {}
    # four workers x 100, allocating while the main thread is inside "parallel";
    # worker 0's own override puts its 3 blocks in "parallel/mine"
    assert sizes_in(p, "parallel")[5005] == 400
    assert 6006 not in sizes_in(p, "parallel")
    assert sizes_in(p, "parallel/mine") == {6006: 3}
    assert sizes_in(p, "reset") == {7007: 7}
    assert sizes_in(p, "(none)")[8008] == 4
    assert p.total_threads == 5

    # one call of each function, and exactly the requested sizes
    assert sizes_in(p, "apis") == {3001: 1, 3003: 1, 3103: 1, 3203: 1, 4081: 1, 4004: 1,
                                   4032: 1, 4005: 1, 4006: 1, 4007: 1}
    # the failed malloc(SIZE_MAX / 2) is counted apart, in no size row
    assert p.failed_allocs == {("apis", "malloc", (2**64 - 1) // 2): 1}
    assert apis_in(p, "apis") == {
        "malloc": 2, "calloc": 1, "realloc": 3, "reallocarray": 1, "posix_memalign": 1,
        "aligned_alloc": 1, "memalign": 1, "valloc": 1, "pvalloc": 1,
        "failed": 1,   # malloc(SIZE_MAX / 2)
        "free": 8 + realloc0_block,  # free(NULL) not counted
    }
    assert apis_in(p, "phase1") == {"malloc": 10, "calloc": 3, "free": 13}


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_zero_byte_allocations_counted_as_size_0(heapscope, build, tmp_path, allocator):
    check_installed(allocator)
    program = build("rec_zero.cpp", "-DHEAPSCOPE_WEAK")
    [p] = record(heapscope, tmp_path, program, options=["--allocator", allocator])
    assert sizes_in(p, "zero") == {0: 9, 1: 4}
    # every allocator returns a block for a zero-byte request, so each is freed
    assert apis_in(p, "zero") == {"malloc": 3, "calloc": 3, "realloc": 1, "operator_new": 6,
                                  "free": 7, "operator_delete": 6}


@pytest.mark.parametrize("allocator", ["glibc", "jemalloc"])
def test_reset_forgets_earlier_counts(heapscope, counts_program, tmp_path, allocator):
    check_installed(allocator)
    [p] = record(heapscope, tmp_path, counts_program, "reset", options=["--allocator", allocator])
    assert sizes_in(p, "reset") == {7007: 2}
    assert sizes_in(p, "(none)")[8008] == 4
    for region in ("phase1", "phase1/inner", "apis", "parallel", "parallel/mine"):
        assert sizes_in(p, region) == {}, region
        assert apis_in(p, region) == {}, region


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_cxx_operator_new_delete_counted_once(heapscope, build, tmp_path, allocator):
    check_installed(allocator)
    program = build("rec_cxx.cpp", "-DHEAPSCOPE_WEAK")
    throwing = allocator != "mimalloc"  # mimalloc's operator new aborts instead of throwing
    args = ["throw"] if throwing else []
    [p] = record(heapscope, tmp_path, program, *args, options=["--allocator", allocator])
    sizes = sizes_in(p, "cxx")
    sizes.pop(4096, None)  # stdout's buffer, on its first printf
    assert sizes == {1111: 5, 2222: 1, 1152: 2, 2304: 1, 1112: 1, 1201: 1}
    # new of 2^62 bytes, nothrow (NULL) and throwing (bad_alloc): counted apart
    assert {k: n for k, n in p.failed_allocs.items() if k[0] == "cxx"} == {
        ("cxx", "operator_new", 2**62): 1 + throwing}
    apis = apis_in(p, "cxx")
    assert apis["operator_new"] == 12 + throwing
    assert apis["operator_delete"] == 11
    assert apis["failed"] == 1 + throwing
    # libstdc++'s operator new calls malloc inside: not counted a second time
    assert apis.get("malloc", 0) <= 1  # (stdout's buffer)


@pytest.mark.parametrize("allocator", ["glibc", "tcmalloc"])
def test_openmp_workers_count_for_the_main_threads_region(heapscope, build, tmp_path, allocator):
    check_installed(allocator)
    program = build("rec_omp.c", "-DHEAPSCOPE_WEAK", "-fopenmp")
    [p] = record(heapscope, tmp_path, program, options=["--allocator", allocator],
                 env={"OMP_NUM_THREADS": "4"})
    assert sizes_in(p, "omp") == {8008: 64}
    assert apis_in(p, "omp") == {"malloc": 64, "free": 64}
    assert p.total_threads == 4


def test_runs_unchanged_without_the_recorder(counts_program):
    """The weak-symbol pattern: the same binary runs with no profiler loaded."""
    import subprocess
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    res = subprocess.run([counts_program], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 0 and res.stdout.startswith("done")
