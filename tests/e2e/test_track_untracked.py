"""Tracking never under-reports quietly: blocks the side table cannot take are
counted with their bytes, every tracking report says so, the peak is marked as a
lower bound and nothing is attributed that is not known; with the table's
default bound (it grows as blocks come) two million live blocks are all tracked.
Program: tests/programs/trk_many_live.c."""
import json

from heapscope.profile import read_profile

SIZE = 48


def record(heapscope, build, out, *options, n, keep=False):
    exe = build("trk_many_live.c")
    heapscope("record", "-o", out, "--track", "--no-symbolize", *options, "--", exe, n, SIZE,
              *(["keep"] if keep else []), timeout=900)
    [path] = out.glob("heapscope.*.hsp")
    return path


def test_a_small_table_counts_every_block_left_out(heapscope, build, tmp_path):
    """5,000 blocks live together, a table of 1,000: 4,000 allocations of 48 B not
    tracked, exactly, with their bytes; the peak (1,000 x 48 B) is a lower bound and
    the part of it in untracked blocks unknown, as every report says."""
    path = record(heapscope, build, tmp_path, "--track-max-blocks", "1000", n=5000)
    t = read_profile(path).tracking
    assert (t.untracked, t.untracked_bytes) == (4000, 4000 * SIZE)
    assert t.peak_is_lower_bound and t.peak_bytes == 1000 * SIZE
    [row] = [s for s in t.stacks if s.size == SIZE]
    assert (row.life.allocs, row.life.frees) == (1000, 1000)

    peak = json.loads(heapscope("peak", path, "--format", "json").stdout)
    [pk] = peak["peaks"]
    assert pk["peak_lower_bound"] is True
    assert (pk["untracked_blocks"], pk["untracked_bytes"]) == (4000, 4000 * SIZE)
    assert pk["unattributed_bytes"] is None          # unknown, never a quiet 0
    assert peak["tracking"]["untracked_bytes"] == 4000 * SIZE
    text = heapscope("peak", path).stdout
    assert "at least 48,000 bytes requested" in text
    assert "4,000 allocations of 192,000 bytes were not tracked" in text
    for report in ("lifetimes", "temporaries", "leaks", "peak"):
        out = heapscope(report, path).stdout
        assert ("note      4,000 allocations of 192,000 bytes were not tracked (tracking table "
                "full") in out, report
        assert "the heap peak is a lower bound" in out, report
    heapscope("html", path, "-o", tmp_path / "page.html")
    assert ("4,000 blocks of 192,000 bytes could not be tracked (the table was full): lifetimes, "
            "the peak's holders and leaks miss them, and the heap peak is a lower bound"
            in (tmp_path / "page.html").read_text())


def test_a_full_table_holds_every_block_replacing_none(heapscope, build, tmp_path):
    """A table exactly as big as the live blocks: nothing left out, no lower bound."""
    path = record(heapscope, build, tmp_path, "--track-max-blocks", "5000", n=5000)
    t = read_profile(path).tracking
    assert (t.untracked, t.untracked_bytes, t.peak_is_lower_bound) == (0, 0, False)
    assert t.peak_bytes == 5000 * SIZE
    pk = json.loads(heapscope("peak", path, "--format", "json").stdout)["peaks"][0]
    assert pk["unattributed_bytes"] == 0 and pk["peak_lower_bound"] is False


def test_two_million_live_blocks_are_all_tracked(heapscope, build, tmp_path):
    """The default bound (a share of the RAM, at least 8 Mi blocks) and the table's
    growth: 2,000,000 blocks live together, every one tracked, leaked at exit."""
    n = 2_000_000
    path = record(heapscope, build, tmp_path, n=n, keep=True)
    p = read_profile(path)
    t = p.tracking
    assert (t.untracked, t.untracked_bytes) == (0, 0)
    [row] = [s for s in t.stacks if s.size == SIZE]
    assert (row.life.allocs, row.life.live_at_end, row.life.live_at_peak) == (n, n, n)
    assert p.size_counts[("(none)", SIZE)] == n
    assert t.peak_bytes >= n * SIZE and not t.peak_is_lower_bound
