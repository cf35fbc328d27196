"""free puts every small block on the freeing thread's cache for its class, whichever
heap owns it (thread_cache.c): the block freed last is allocated first whatever its
owner, and blocks of two heaps in a thread's caches go home exactly when the owner and
then the freeing thread exit, every page given back."""
import os
import subprocess

import pytest

N, NBIG = 3000, 300  # thread_cache.c: A's 48-byte and 12000-byte blocks


def run(build, native, *mode, env=None):
    lib = str(native / "lib")
    exe = build("../allocator/thread_cache.c", "-O1", "-pthread", "-L" + lib,
                "-Wl,-rpath," + lib, "-lhsmalloc", name="thread_cache")
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.update(env or {})
    res = subprocess.run([str(exe), *mode], capture_output=True, text=True, env=full, timeout=60)
    assert res.returncode == 0, res.stderr
    return {w[0]: {w[i]: int(w[i + 1]) for i in range(1, len(w), 2)}
            for w in (line.split() for line in res.stdout.splitlines()[1:])}


@pytest.mark.parametrize("secure", ["0", "1"])
def test_the_block_freed_last_comes_first_whoever_owns_it(build, native, secure):
    """B frees its own x, A's y, its own z: malloc gives z, y, x. Before the thread cache
    B's own blocks went back to their page and A's to the cache, which malloc took
    first: y, z, x (and y was counted as a remote free); secure mode sent y home."""
    got = run(build, native, env={"HSMALLOC_HOT_DETECT": "0", "HSMALLOC_SECURE": secure})
    assert got["lifo"] == {"order_zyx_ok": 1, "frees": 3, "remote_frees": 0}


@pytest.mark.parametrize("secure", ["0", "1"])
def test_owner_and_freeing_thread_exit_with_blocks_in_caches(build, native, secure):
    """A exits while its N + N/10 blocks wait in B's caches (and in its own queue), B
    exits with the rest and its own N/2 freed blocks: every block of A's came home
    through A's queue (rfq_blocks), B counted each free and each of A's blocks that
    left its caches (home, or into the transfer cache, which the collect sends home),
    and every page of both heaps went back (page bytes 0); a thread adopting an abandoned heap then allocates and checks N
    blocks. Contents are checked before every free."""
    got = run(build, native, "exit", env={"HSMALLOC_HOT_DETECT": "0", "HSMALLOC_SECURE": secure})
    assert got["A"] == {"allocs": N + NBIG, "frees": 0, "rfq_blocks": N + NBIG, "page_bytes": 0}
    b, m = got["B"], got["M"]
    assert {k: b[k] for k in ("allocs", "frees", "remote_frees", "page_bytes")} == {
        "allocs": N // 2, "frees": N + NBIG + N // 2, "remote_frees": N + NBIG, "page_bytes": 0}
    if secure == "1":  # no transfer cache: B sends its caches home
        assert (b["transfer_out"], b["rfq_blocks"]) == (0, 0)
        assert m == {"remote_frees": 0, "transfer_in": 0}
    else:
        # B's 48-byte cache (bound 1024 while B allocates the class) overflows: its
        # newest 512 go to the transfer cache; at the next overflow B only frees (bound
        # 85 = 4 KiB / 48): 1024 do not fit beside the 512 (64 KiB = 1365 blocks) and go
        # home; then batches of 85 while they fit in 64 KiB (10 of them). Nobody takes
        # them: the main thread's collect sends all 1362 home (A's through A's queue, B's
        # own through B's), counted as remote frees once, by B when it put them.
        assert b["transfer_out"] == 512 + 10 * (4096 // 48) == 1362
        assert m == {"remote_frees": 0, "transfer_in": 1362}
        assert 0 < b["rfq_blocks"] < 1362
    assert got["C"] == {"ok": 1}
