"""Tracking mode on C++: every operator new/delete variant, and the churn workload
(hs-wl-cxx-churn) whose tracked totals must equal the counts of a counts-only run."""
from heapscope.native import program
from heapscope.profile import read_profile


def one_profile(out):
    [path] = out.glob("heapscope.*.hsp")
    return read_profile(path)


def by_size(profile):
    out = {}
    for s in profile.tracking.stacks:
        assert s.size not in out
        out[s.size] = s.life
    return out


def test_operators_new_and_delete(heapscope, build, tmp_path):
    exe = build("trk_cxx.cpp")
    heapscope("record", "-o", tmp_path, "--track", "--sample-bytes", "off", "--", exe)
    p = one_profile(tmp_path)
    r = by_size(p)
    for size, n in ((8, 7), (33, 3), (41, 1), (192, 1), (384, 1)):
        assert (r[size].allocs, r[size].frees, r[size].temporaries, r[size].live_at_end) == (n, n, n, 0), size
    assert (r[100].allocs, r[100].frees, r[100].live_at_end_bytes) == (1, 0, 100)
    assert r[384].live_at_peak == 1
    assert sum(l.live_at_peak_bytes for l in r.values()) == p.tracking.peak_bytes
    # usable - requested on glibc: 8 -> 24, 33 -> 40, 41 -> 56
    assert p.tracking.extra[8] == (7, 7 * 16)
    assert p.tracking.extra[33] == (3, 3 * 7)
    assert p.tracking.extra[41] == (1, 15)
    # every counted allocation is tracked, and every delete found its block
    assert {size: l.allocs for size, l in r.items()} == {s: n for (_, s), n in p.size_counts.items()}
    deletes = p.api_counts[("(none)", "operator_delete")]
    assert sum(l.frees for l in r.values()) == deletes == 13


def test_churn_totals_equal_the_counts(heapscope, tmp_path):
    churn = program("hs-wl-cxx-churn")
    args = ["--", churn, "--ops", "20000", "--working-set", "500"]
    heapscope("record", "-o", tmp_path / "counts", *args)
    heapscope("record", "-o", tmp_path / "track", "--track", *args)
    counts = one_profile(tmp_path / "counts")
    tracked = one_profile(tmp_path / "track")
    t = tracked.tracking
    assert t.untracked == 0
    per_size = {}
    for s in t.stacks:
        per_size[s.size] = per_size.get(s.size, 0) + s.life.allocs
    assert per_size == {size: n for (_, size), n in counts.size_counts.items()}
    assert sum(per_size.values()) > 150_000
    frees = sum(s.life.frees for s in t.stacks)
    api = tracked.api_counts
    assert frees == api[("(none)", "operator_delete")] + api.get(("(none)", "free"), 0)
    live = sum(s.life.live_at_end for s in t.stacks)
    assert live == sum(per_size.values()) - frees
    assert t.end_bytes == sum(s.life.live_at_end_bytes for s in t.stacks)
    assert t.peak_bytes >= t.end_bytes


def test_a_block_from_a_library_constructor_keeps_its_stack(heapscope, build, tmp_path):
    """libstdc++ allocates its exception-handling pool (72,704 bytes) in its own
    constructor, which runs before the recorder's: the recorder reads its settings at
    the first allocation, so under --sizes all that block has its stack (the loader's
    _dl_init calling libstdc++) in `stacks` and in the tracking reports, and no
    allocation of the recording is without one. (They had none: `stacks --size 72704`
    said the program made no such allocation.)"""
    import json
    exe = build("trk_cxx.cpp")
    heapscope("record", "-o", tmp_path / "all", "--track", "--sizes", "all", "--", exe)
    doc = json.loads(heapscope("leaks", tmp_path / "all", "--format", "json").stdout)
    assert all(t["recorded"] for t in doc["leaks"]), doc["leaks"]
    heapscope("record", "-o", tmp_path / "stacks", "--sizes", "all", "--", exe)
    profile = one_profile(tmp_path / "stacks")
    assert sum(t.count for t in profile.stack_types) == sum(profile.size_counts.values())
    doc = json.loads(heapscope("stacks", tmp_path / "stacks", "--size", "all", "--top", "0",
                               "--format", "json").stdout)
    assert doc["without_stack"] == []
    at_start = [(g["size"], t) for g in doc["groups"] for t in g["stack_types"]
                if any(f["function"] == "_dl_init" for f in t["frames"])]
    assert at_start, "no stack from a library constructor"
    assert any(size == 72704 and "libstdc++" in t["frames"][0]["module"] for size, t in at_start)


def test_a_size_not_selected_says_so(heapscope, build, tmp_path):
    import json
    exe = build("trk_cxx.cpp")
    heapscope("record", "-o", tmp_path / "some", "--track", "--sizes", "8", "--", exe)
    doc = json.loads(heapscope("leaks", tmp_path / "some", "--format", "json").stdout)
    row = next(t for t in doc["leaks"] if t["size"] == 100)     # the program's own leak
    assert (row["recorded"], row["no_stack"]) == (False, "not-selected")
    assert "(no stack: this size was tracked without its stacks)" in \
        heapscope("leaks", tmp_path / "some").stdout
