"""render/notes: one line per kind of note (notes that differ only in the files, ids or
counts they name, two or more, become one line with a count); a kind of one note stays
as it is; a note repeated by two sources is said once; verbose keeps every note."""
from heapscope.render.notes import collapse, kinds

ADVICE = "install its -dbgsym package or rebuild with -g"


def mca(n):
    return f"no debug info for /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_{n}.so; {ADVICE}"


def test_27_no_debug_info_notes_are_one_line():
    names = [f"m{i:02d}" for i in range(27)]
    lines = [mca(n) for n in names] + ["eu-addr2line not found: install elfutils"]
    out = collapse(lines)
    assert out == ["no debug info for 27 libraries (mca_btl_m00.so, mca_btl_m01.so, mca_btl_m02.so "
                   "and 24 more; --verbose lists them); install their -dbgsym packages or "
                   "rebuild with -g",
                   "eu-addr2line not found: install elfutils"]
    assert collapse(lines, verbose=True) == lines


def test_two_alike_are_one_line_and_other_wordings_collapse_generically():
    assert collapse([mca("a"), mca("b")]) == [
        "no debug info for 2 libraries (mca_btl_a.so, mca_btl_b.so; --verbose lists them); "
        "install their -dbgsym packages or rebuild with -g"]
    assert collapse([mca("a")]) == [mca("a")]
    gone = [f"/data/run{i}/prog is not on this machine; its frames show ??" for i in range(4)]
    out = collapse(gone)
    assert len(out) == 1
    assert out[0].startswith("/data/run0/prog is not on this machine; its frames show ?? "
                             "(and 3 more like it: prog, prog, prog;")


def test_one_line_per_kind_whatever_the_ids_and_counts():
    changed = [f"/opt/app/lib{i}.so has changed since the recording (build-id {i:040x}, "
               f"recorded {i + 7:040x}); its frames show ?? (symbolize where the recorded "
               f"binaries are, or re-record)" for i in range(11)]
    ranks = [f"rank {r}: 2 processes (pids {100 + r}, {200 + r})" for r in range(5)]
    lines = changed + ranks + [mca("x")]
    out = collapse(lines)
    assert len(out) == 3
    assert out[0].startswith(changed[0] + " (and 10 more like it: lib1.so, lib10.so, lib2.so "
                             "and 7 more; --verbose lists them)")
    assert out[1] == ranks[0] + " (and 4 more like it; --verbose lists them)"
    assert out[2] == mca("x")
    grouped = kinds(lines)
    assert [len(k.members) for k in grouped] == [11, 5, 1] and grouped[1].members == ranks


def test_a_note_from_two_sources_is_said_once():
    twice = [mca("a"), "eu-addr2line not found: install elfutils", mca("a")]
    assert collapse(twice) == [mca("a"), "eu-addr2line not found: install elfutils"]
    assert collapse(twice, verbose=True) == [mca("a"), "eu-addr2line not found: install elfutils"]


def test_the_job_reports_peak_holders_say_their_notes_once():
    from heapscope.render.job_peak_stacks_text import lines
    doc = dict(ranks=2, ranks_tracked=2, per_rank=8, exact=True, types=[],
               notes=[mca("a"), mca("b"), mca("c")])
    notes = [line for line in lines(doc) if "no debug info" in line]
    assert notes == ["  note: no debug info for 3 libraries (mca_btl_a.so, mca_btl_b.so, "
                     "mca_btl_c.so; --verbose lists them); install their -dbgsym packages or "
                     "rebuild with -g"]
    assert [line for line in lines(doc, verbose=True) if "no debug info" in line] == \
        [f"  note: {mca(n)}" for n in "abc"]
