"""The transfer cache (transfer_batches.c): a thread that only frees another's blocks
hands its cache's overflow to the owner as whole batches, which the owner's empty
cache takes before it drains its queue or touches a page. Exact figures: a consumer's
batch is its free-only bound (4 KiB of blocks, at least 4); a class holds at most 16
batches and 64 KiB; the rest goes home as before."""
import os
import subprocess

import pytest

SLOTS, CLASS_BYTES = 16, 64 * 1024


def run(build, native, size, n, env=None):
    lib = str(native / "lib")
    exe = build("../allocator/transfer_batches.c", "-O1", "-pthread", "-L" + lib,
                "-Wl,-rpath," + lib, "-lhsmalloc", name="transfer_batches")
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.update({"HSMALLOC_HOT_DETECT": "0"}, **(env or {}))
    res = subprocess.run([str(exe), str(size), str(n)], capture_output=True, text=True,
                         env=full, timeout=60)
    assert res.returncode == 0, res.stderr
    return {w[0]: {w[i]: int(w[i + 1]) for i in range(1, len(w), 2)}
            for w in (line.split() for line in res.stdout.splitlines())}


@pytest.mark.parametrize("size,n", [(64, 2048), (48, 2045), (4096, 64)])
def test_a_consumer_hands_whole_batches_to_the_producer(build, native, size, n):
    """C frees the n blocks P allocated: at every `bound`-th free after the first its
    cache overflows; the first batches go to the transfer cache until its 16 slots (48
    bytes: 16 x 85 blocks, 65280 bytes) or its 64 KiB (64 bytes: 16 x 64 blocks, both at
    once; 4096 bytes: 16 blocks, 4 batches) are full, the others home (one push each).
    P then allocates n blocks (n fits its refills: its cache ends empty): the transfer
    cache's first, newest batch first, in C's order; only then its queue (the batches
    sent home, and the blocks C's exit sent)."""
    bound = max(4, 4096 // size)
    overflows = (n - 1) // bound
    put = min(SLOTS, CLASS_BYTES // size // bound, overflows)
    got = run(build, native, size, n)
    # every block that left C's cache is a remote free, whichever way it went
    assert got["C"] == {"remote_frees": overflows * bound,
                        "remote_pushes": overflows - put, "transfer_out": put * bound}
    assert put * bound == {64: 1024, 48: 1360, 4096: 16}[size]
    p = got["P"]
    assert (p["transfer_in"], p["first_batch_ok"]) == (put * bound, 1)
    if size < 4096:  # the rest came through P's queue
        assert p["rfq_blocks"] == n - put * bound
    if size == 64:  # every block P gets back is one C freed: none carved afresh
        assert p["reused"] == n


def test_without_the_transfer_cache_every_batch_goes_home(build, native):
    """HSMALLOC_TRANSFER=0: C sends each of its 31 overflows home, P drains them all
    (and the 64 C's exit sent)."""
    got = run(build, native, 64, 2048, {"HSMALLOC_TRANSFER": "0"})
    assert got["C"] == {"remote_frees": 31 * 64, "remote_pushes": 31, "transfer_out": 0}
    assert (got["P"]["transfer_in"], got["P"]["rfq_blocks"]) == (0, 2048)


def test_secure_mode_keeps_its_checked_path_home(build, native):
    """Secure mode's cached blocks go home checked (cache.c), never through the
    transfer cache: P gets every block C freed back through its queue."""
    got = run(build, native, 64, 2048, {"HSMALLOC_SECURE": "1"})
    assert got["C"]["transfer_out"] == 0
    assert (got["P"]["transfer_in"], got["P"]["rfq_blocks"]) == (0, 2048)
