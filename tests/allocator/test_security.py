"""hsmalloc's checks against heap misuse (tests/allocator/security_probes.c, one probe
per run), in the default mode and with HSMALLOC_SECURE=1: each probe ends the way
docs/hsmalloc.md ("Hardening") says. A detected misuse is abort() after exactly one
line on stderr that names the call, the pointer and what is wrong."""
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

ALLOC = "../allocator/"
DOUBLE = "double free (the block is free already)"
NOT_OURS = "not a block hsmalloc handed out"
WRITTEN = "this free block was written after it was freed"

# probe: (outcome in the default mode, outcome with HSMALLOC_SECURE=1); an outcome is
# ("abort", text of hsmalloc's line), ("glibc", glibc's message: the pointer is not
# hsmalloc's, so glibc's free judges it), ("segv", None), ("exit", stdout)
SAME = object()
PROBES = {
    "double-free-immediate": (("abort", DOUBLE), SAME),
    "double-free-delayed": (("abort", DOUBLE), SAME),
    "double-free-after-many": (("abort", DOUBLE), SAME),
    "double-free-other-thread": (("abort", DOUBLE), SAME),
    "double-free-remote": (("abort", DOUBLE), SAME),
    # a block in a batch waiting in the transfer cache (secure mode: in the owner's queue)
    "double-free-in-transfer": (("abort", DOUBLE), SAME),
    # the second free by a thread that never allocated (no heap, no cache)
    "double-free-heapless-thread": (("abort", DOUBLE), SAME),
    "double-free-small-size": (("abort", DOUBLE), SAME),
    # its page went back at its thread's exit: the reserved limit (0) rejects it, not
    # the carved count the page keeps (which took it for a double free)
    "double-free-remote-page-gone": (("abort", NOT_OURS), SAME),
    # the page went back to its segment with its only block: not in use any more
    "double-free-large": (("abort", NOT_OURS), SAME),
    "double-free-large-remote": (("abort", DOUBLE), SAME),
    # the mapping is gone (or cached, unregistered): glibc's free rejects the pointer
    "double-free-huge": (("glibc", "free(): invalid pointer"), SAME),
    "double-free-aligned": (("abort", DOUBLE), SAME),
    "double-free-by-realloc": (("abort", DOUBLE), SAME),
    "interior-pointer": (("abort", NOT_OURS), SAME),
    "unaligned-pointer": (("abort", NOT_OURS), SAME),
    "interior-pointer-large": (("abort", NOT_OURS), SAME),
    "interior-pointer-huge": (("abort", NOT_OURS), SAME),
    "stack-pointer": (("abort", "an address on this thread's stack"), SAME),
    "stack-pointer-thread": (("abort", "an address on this thread's stack"), SAME),
    "global-pointer": (("abort", "an address inside a loaded program or library"), SAME),
    "never-returned-block": (("abort", NOT_OURS), SAME),
    # another thread's free: it was checked against the blocks that fit in the page
    "never-returned-block-remote": (("abort", NOT_OURS), SAME),
    "metadata-pointer": (("abort", NOT_OURS), SAME),
    # free's fast path masks the address into the registry: the block's own page rejects it
    "above-user-space": (("abort", NOT_OURS), SAME),
    # default mode: the forged link is followed and the next allocation of the size
    # faults; secure mode: the link is checked before the block is handed out
    "free-list-overwrite": (("segv", None), ("abort", WRITTEN)),
    "free-mark-overwrite": (("exit", "undetected free-mark-overwrite"), ("abort", WRITTEN)),
    # secure mode: the last page of every segment has no access
    "segment-end-write": (("exit", "undetected segment-end-write"), ("segv", None)),
    # secure mode: fresh blocks are handed out in random order
    "allocation-order": (("exit", "ascending 1\nundetected allocation-order"),
                         ("exit", "ascending 0\nundetected allocation-order")),
    # secure mode: a canary behind every request, checked at free; the 40-byte request's
    # block has no room after it: the overflow runs over the word that keeps its size
    "heap-overflow-next-block": (
        ("exit", "undetected heap-overflow-next-block"),
        ("abort", "heap overflow: the word after the block's request was overwritten")),
    "heap-overflow-one-byte": (
        ("exit", "undetected heap-overflow-one-byte"),
        ("abort", "heap overflow: the bytes after the 1000-byte request were overwritten")),
    "heap-overflow-large": (
        ("exit", "undetected heap-overflow-large"),
        ("abort", "heap overflow: the bytes after the 200000-byte request were overwritten")),
    "heap-overflow-huge": (
        ("exit", "undetected heap-overflow-huge"),
        ("abort", "heap overflow: the bytes after the 8388000-byte request were overwritten")),
    # one byte past every request of 1 to 300 bytes, each in a child process: secure
    # mode's free aborts at every one (the gap to the word that keeps the request is
    # 0 to 15 bytes: the canary checked whole, in part, or the word itself overwritten)
    "heap-overflow-heapless-thread": (
        ("exit", "undetected heap-overflow-heapless-thread"),
        ("abort", "heap overflow: the bytes after the 100-byte request were overwritten")),
    "heap-overflow-every-size": (("exit", "caught 0 of 300\nundetected heap-overflow-every-size"),
                                 ("exit", "caught 300 of 300\nundetected heap-overflow-every-size")),
    # the same about the limit of secure malloc's own path (4072 bytes) and of the class
    # table (4096): requests either side take different paths, all with the canary
    "heap-overflow-table-edge": (("exit", "caught 0 of 51\nundetected heap-overflow-table-edge"),
                                 ("exit", "caught 51 of 51\nundetected heap-overflow-table-edge")),
    # a forged link or free mark in a thread's cache, met by its flush at thread exit (a
    # page's run of blocks, each checked) and in a heap's queue of other threads' frees
    # (drained by runs too); the default mode follows the forged pointer and faults
    "cache-link-overwrite": (("segv", None), ("abort", WRITTEN)),
    "cache-mark-overwrite": (("segv", None), ("abort", WRITTEN)),
    "remote-link-overwrite": (
        ("segv", None),
        ("abort", "a block in the queue of other threads' frees was overwritten")),
    # a forged link in a batch of the transfer cache (default mode: followed); secure
    # mode sends a cache's overflow home, and the owner's drain finds the forged link
    "transfer-link-overwrite": (
        ("segv", None),
        ("abort", "a block in the queue of other threads' frees was overwritten")),
    # a free mark cleared on a page that came back empty: secure mode keeps the page and
    # checks the block as it leaves the page's list; the default mode carves the page
    # again, which rewrites the mark
    "kept-page-mark-overwrite": (("exit", "undetected kept-page-mark-overwrite"),
                                 ("abort", WRITTEN)),
}


@pytest.fixture(scope="module")
def probes(build):
    return build(ALLOC + "security_probes.c", "-pthread", name="security_probes")


def run_probe(exe, native, name, secure, timeout=60):
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libhsmalloc.so"),
               HSMALLOC_SECURE="1" if secure else "0")
    return subprocess.run([str(exe), name], capture_output=True, text=True, env=env,
                          timeout=timeout)


def test_every_probe_has_an_expected_outcome(probes):
    listed = subprocess.run([str(probes), "list"], capture_output=True, text=True,
                            check=True).stdout.split()
    assert sorted(listed) == sorted(PROBES)


@pytest.mark.parametrize("secure", [False, True], ids=["default", "secure"])
@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe(probes, native, name, secure):
    default, secure_outcome = PROBES[name]
    kind, text = default if not secure or secure_outcome is SAME else secure_outcome
    res = run_probe(probes, native, name, secure)
    if kind == "abort":
        assert res.returncode == -signal.SIGABRT, (res.returncode, res.stdout, res.stderr)
        lines = res.stderr.splitlines()
        assert len(lines) == 1, res.stderr
        call = "realloc" if name.endswith("by-realloc") else "malloc" if text == WRITTEN else "free"
        assert re.fullmatch(rf"hsmalloc: {call}\(0x[0-9a-f]+\): .*; aborting", lines[0]), lines[0]
        assert text in lines[0]
        assert "undetected" not in res.stdout
    elif kind == "glibc":
        assert res.returncode == -signal.SIGABRT, (res.returncode, res.stderr)
        assert res.stderr.strip() == text
    elif kind == "segv":
        # a fault on the forged address: SIGSEGV, or SIGBUS when the compiler made it an
        # address off rbp (x86-64 raises a stack-segment fault for a non-canonical one)
        assert res.returncode in (-signal.SIGSEGV, -signal.SIGBUS), (res.returncode, res.stdout,
                                                                      res.stderr)
        assert "undetected" not in res.stdout
    else:
        assert res.returncode == 0, res.stderr
        assert res.stdout.strip() == text


def test_the_reported_pointer_is_the_one_freed(probes, native):
    """The line names the pointer given to free: the interior one, not its block."""
    res = run_probe(probes, native, "unaligned-pointer", secure=False)
    pointer = int(re.search(r"free\((0x[0-9a-f]+)\)", res.stderr).group(1), 16)
    assert pointer % 16 == 1


def test_api_suite_in_secure_mode(build, native):
    """The whole API contract holds with HSMALLOC_SECURE=1 (glibc is its reference)."""
    exe = build(ALLOC + "api_suite.c", "-ldl", name="api_suite")
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libhsmalloc.so"), HSMALLOC_SECURE="1")
    res = subprocess.run([str(exe), "owned"], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[0] == "ok" and int(res.stdout.split()[1]) >= 2900


def test_stress_in_secure_mode(build, native):
    """32 threads per wave handing objects over, remote frees, threads exiting with live
    objects, every object's contents checked: the encoded lists and remote queues hold."""
    exe = build(ALLOC + "stress.c", "-O2", "-pthread", name="stress")
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libhsmalloc.so"), HSMALLOC_SECURE="1")
    res = subprocess.run([str(exe), "32", "3", "4000"], capture_output=True, text=True, env=env,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    fields = dict(f.split("=") for f in res.stdout.split()[1:])
    assert res.stdout.split()[0] == "ok" and int(fields["threads"]) == 32
    assert int(fields["handed"]) > 10000 and int(fields["orphans"]) > 100


def test_the_unchecked_build_lacks_exactly_the_default_checks(probes, tmp_path):
    """scripts/build_hsmalloc_unchecked.sh (what BENCHMARKS.md's cost of the checks is
    measured against) builds from today's sources, and its library lets through the
    double free and the interior pointer the real one aborts on, while secure mode's
    checks stay."""
    root = Path(__file__).resolve().parents[2]
    res = subprocess.run(["sh", str(root / "scripts" / "build_hsmalloc_unchecked.sh"),
                          str(tmp_path / "unchecked")], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    lib = tmp_path / "unchecked" / "native" / "lib"
    assert Path(res.stdout.strip()) == lib / "libhsmalloc.so"
    for name in ("double-free-immediate", "interior-pointer"):
        out = run_probe(probes, lib.parent, name, secure=False)
        assert (out.returncode, out.stdout.strip()) == (0, f"undetected {name}"), out.stderr
    # the remote double free let through may put the block twice in the freeing thread's
    # cache, a list that then loops on itself, and the thread's exit walks it for ever
    # (gdb: hsm_cache_flush_all; every run from a shell here, none under pytest, once
    # under load): a hang is let through too
    try:
        out = run_probe(probes, lib.parent, "double-free-remote", secure=False, timeout=10)
        assert (out.returncode, out.stdout.strip()) == (0, "undetected double-free-remote"), \
            out.stderr
    except subprocess.TimeoutExpired:
        pass
    out = run_probe(probes, lib.parent, "double-free-immediate", secure=True)
    assert out.returncode == -signal.SIGABRT and DOUBLE in out.stderr
