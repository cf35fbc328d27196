"""An idle owner's blocks stay with the thread that frees them (idle_owner.c): once
256 KiB of a heap's blocks were pushed to it since its thread last allocated (it is not
running, or not allocating), a thread that allocates the class (at least half as often
as it frees it) keeps the blocks of that heap it frees in its cache, up to 1 MiB a class,
and its next allocations take them before it carves.

Exact figures for the 16 KiB class (a cache holds one block; no transfer cache): F's
first overflow sends its own last block home, each later one the block of O it holds,
one push of 16 KiB each; at the 18th free 16 blocks (256 KiB) were pushed to O, so the
bound doubles (2, 4 .. 64 blocks: 1 MiB) instead; at 64 every overflow sends the newest
32 home. F's first allocations take the kept blocks (before: 1 block kept)."""
import pytest

from hsm_linked import program_figures

BLOCK, IDLE_BYTES, KEEP_BYTES = 16384, 256 * 1024, 1 << 20


def run(build, native, size, n, env=None):
    return program_figures(build, native, "idle_owner.c", [str(size), str(n)],
                           {"HSMALLOC_HOT_DETECT": "0", **(env or {})})


def kept_after(n):
    """Blocks F's cache holds after n frees of O's 16 KiB blocks (the trace above)."""
    home_first = IDLE_BYTES // BLOCK  # 16 pushes make O idle
    keep = KEEP_BYTES // BLOCK        # 64
    if n <= home_first + 1:
        return 1
    held = 1
    for _ in range(home_first + 2, n + 1):
        if held == keep:
            held -= keep // 2
        held += 1
    return held


@pytest.mark.parametrize("n", [18, 81, 160])
def test_a_freer_keeps_an_idle_owners_blocks_and_allocates_them(build, native, n):
    kept = kept_after(n)
    assert kept == {18: 2, 81: 33, 160: 48}[n]
    assert run(build, native, BLOCK, n) == {"remote_frees": n - kept, "reused": kept}


def test_below_the_owners_idle_bytes_every_block_goes_home(build, native):
    """17 frees: 15 blocks of O pushed (240 KiB) when the last overflows: as before."""
    assert run(build, native, BLOCK, 17) == {"remote_frees": 16, "reused": 1}


def test_secure_mode_sends_them_home_checked(build, native):
    assert run(build, native, BLOCK, 160, {"HSMALLOC_SECURE": "1"}) == \
        {"remote_frees": 159, "reused": 1}
