"""hsmalloc's chains (hsmalloc.h, hsmalloc_chain.hpp): every operation with block contents
checked, frees from other threads, free-all then reuse, the default switch around library
code, pinned and shared-memory buffers, std::pmr containers, and each misuse's defined
outcome (one line on stderr, then abort)."""
import os
import signal
import subprocess

import pytest

ALLOC = "../allocator/"


def linked(native):
    lib = str(native / "lib")
    return ("-pthread", "-L" + lib, "-Wl,-rpath," + lib, "-lhsmalloc", "-ldl")


@pytest.fixture(scope="module")
def chains(build, native):
    return build(ALLOC + "chains.c", *linked(native), name="chains")


def run(exe, *args):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=120)


def passed(res):
    assert res.returncode == 0, res.stdout + res.stderr
    words = res.stdout.split()
    assert words[0] == "ok", res.stdout
    return int(words[1])


# (mode, fewest checks it makes: the program's own count, so a mode that stopped early fails)
MODES = [
    ("os", 800000),          # every operation on OS memory; the soft limit, then ENOMEM
    ("buffer", 90000),       # an mmap'd buffer: all blocks inside, full -> NULL + ENOMEM
    ("unaligned", 50000),    # buffers inside a heap block and in static memory
    ("remote", 8000),        # free() of an unshared chain's blocks by two other threads
    ("shared", 150000),      # four threads on one shared chain
    ("reset", 800),          # free-all, then the same addresses again
    ("aligned-pages", 18),   # blocks handed out inside, in later pages of a span, freed
    ("default", 1000),       # strdup, qsort with an allocating comparator, nesting, ENOMEM
    ("mlock", 90000),        # a pinned buffer
    ("shm", 90000),          # a shm_open'd buffer, the blocks seen through a second mapping
    ("bad-args", 11),        # EINVAL, ENOSPC, EBUSY, ENOMEM
]


@pytest.mark.parametrize("mode,fewest", MODES, ids=[m for m, _ in MODES])
def test_chain_mode(chains, mode, fewest):
    assert passed(run(chains, mode)) >= fewest


MISUSE = {
    "free-other-chain": "hsmalloc_chain_free: the block belongs to another chain",
    "free-not-chain": "hsmalloc_chain_free: not a block of any chain",
    "free-chain-header": "hsmalloc_chain_free: not a block of any chain",
    "alloc-other-thread": "hsmalloc_chain_malloc: the chain is not shared and this thread is not its owner",
    "reset-other-thread": "hsmalloc_chain_reset: the chain is not shared and this thread is not its owner",
    "destroyed": "hsmalloc_chain_malloc: not a chain (destroyed, or never created)",
    "destroy-default-elsewhere": "hsmalloc_chain_destroy: the chain is another thread's default",
}


@pytest.mark.parametrize("what", sorted(MISUSE))
def test_misuse_aborts_with_one_line(chains, what):
    res = run(chains, "misuse:" + what)
    assert res.returncode == -signal.SIGABRT, (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hsmalloc: " + MISUSE[what]), res.stderr
    assert "no abort" not in res.stdout


def test_cxx_pmr_allocator_and_scope(build, native):
    exe = build(ALLOC + "chains_cxx.cpp", "-std=c++17", *linked(native), name="chains_cxx")
    assert passed(run(exe)) >= 16


def test_chain_blocks_under_preload(build, native):
    """The program is linked with -lhsmalloc; the same library preloaded (how heapscope
    runs it) serves the same chains."""
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libhsmalloc.so"))
    exe = build(ALLOC + "chains.c", *linked(native), name="chains")
    res = subprocess.run([str(exe), "default"], capture_output=True, text=True, env=env, timeout=120)
    assert passed(res) >= 1000


def test_mesh_refine_pool_and_chain_variants_agree(native):
    """The benchmark's variants (workloads/mesh-refine --pool) compute the same mesh: new/
    delete, the per-thread custom pool and hsmalloc chains, with one and two threads."""
    exe = str(native / "bin" / "hs-wl-mesh-refine")
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libhsmalloc.so"))
    for threads in ("1", "2"):
        outs = set()
        for pool in ("0", "1", "2"):
            res = subprocess.run([exe, "--rounds", "6", "--min-area-ppb", "20000", "--threads", threads,
                                  "--pool", pool], capture_output=True, text=True, env=env, timeout=120)
            assert res.returncode == 0, res.stderr
            outs.add(res.stdout)
        assert len(outs) == 1 and "checksum: " in outs.pop()


def test_mesh_refine_chain_variant_needs_hsmalloc(native):
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    res = subprocess.run([str(native / "bin" / "hs-wl-mesh-refine"), "--pool", "2"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip() == "mesh-refine: --pool 2 needs hsmalloc (LD_PRELOAD=libhsmalloc.so)"
