"""render/notes.collapse: notes that differ only in the file they name, three or more,
become one line with a count; others stay as they are; verbose keeps every one."""
from heapscope.render.notes import collapse

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


def test_two_alike_stay_two_lines_and_other_wordings_collapse_generically():
    assert collapse([mca("a"), mca("b")]) == [mca("a"), mca("b")]
    gone = [f"/data/run{i}/prog is not on this machine; its frames show ??" for i in range(4)]
    out = collapse(gone)
    assert len(out) == 1
    assert out[0].startswith("/data/run0/prog is not on this machine; its frames show ?? "
                             "(and 3 more like it: prog, prog, prog;")
