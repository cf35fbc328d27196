"""record --access's frees over glibc ask glibc's chunk header, not the filter of blocks
measured in place, unless the chunk is 64 KiB or more or starts a page
(access/access.h, hsr_access_concerns_glibc). Every block tests/programs/acc_free_paths.cpp
measures in place (heap and mapped chunks, exactly 64 KiB, memalign'd beyond a page,
aligned_alloc'd, new[]/delete[], sized operator delete, a realloc of one) must still end
at its free with its own pages' figures, and the small ones from the pool too, under
glibc (the header) and hsmalloc (no header: the filter), with every free counted."""
import json
import subprocess

import pytest

from heapscope.allocators import find_allocator
from heapscope.profile import read_profile

ROUNDS = 8
PAGE = 4096
KIB64 = 65536

# function -> (size, touched bytes of each block: its written bytes, up to the partial
# pages at its two ends, which count as their inner neighbour's)
WRITTEN = {
    "place_heap": (100000, KIB64),
    "place_mapped": (40 << 20, KIB64),
    "place_exact": (KIB64, KIB64),
    "place_align": (12288, 0),
    "place_align_big": (70000, 70000),
    "place_new": (131072, KIB64),
    "place_sized": (98304, 0),
    "pool_used": (3000, 3000),
    "pool_unused": (2000, 0),
}


def entries(heapscope, path):
    doc = json.loads(heapscope("access", path, "--top", "0", "--format", "json").stdout)
    return {(e["frames"][0]["function"], e["size"]): e for e in doc["entries"] if e["frames"]}


@pytest.mark.parametrize("allocator", ["glibc", "hsmalloc"])
def test_measured_blocks_end_at_their_free(heapscope, build, tmp_path, allocator):
    assert allocator == "glibc" or find_allocator(allocator), "libhsmalloc.so is not built"
    program = build("acc_free_paths.cpp")
    plain = subprocess.run([str(program), str(ROUNDS)], capture_output=True, text=True,
                           check=True)
    out = tmp_path / "out"
    # a sample a mean 256 bytes apart: every block from 2000 bytes on is sampled; the
    # watcher's looks a minute apart, so each block is read at its free (or never)
    res = heapscope("record", "--access", "--sample-bytes", "256", "--allocator", allocator,
                    "-o", out, "--", program, ROUNDS, env={"HEAPSCOPE_ACCESS_POLL_MS": "60000"})
    assert res.stdout == plain.stdout
    [path] = out.glob("*.hsp")
    e = entries(heapscope, path)
    for function, (size, written) in WRITTEN.items():
        got = e[(function, size)]
        assert got["blocks"] == got["samples"] == got["measured"] == ROUNDS, (function, got)
        # a block found at its free is read there: its own pages, not a later block's
        # that took its address, nor the state at the program's end
        each = got["touched_bytes"] / ROUNDS
        assert written <= each <= written + 2 * PAGE, (function, got["touched_bytes"])
        assert got["never_touched_blocks"] == (ROUNDS if written == 0 else 0), function
    moved = e[("realloc_grown", 160000)]   # its 80000 bytes carried over: touched
    assert moved["measured"] == ROUNDS
    assert 80000 <= moved["touched_bytes"] / ROUNDS <= 80000 + 2 * PAGE
    assert e[("realloc_place", 80000)]["measured"] == ROUNDS
    # every free and delete counted, the fast path's and the pool's alike
    p = read_profile(path)
    apis = {}
    for (_, api), n in p.api_counts.items():
        apis[api] = apis.get(api, 0) + n
    assert apis["free"] >= ROUNDS * (7 + 1000)
    assert apis["operator_delete"] >= 2 * ROUNDS
