"""Symbolizer on a real program compiled with -g: names (demangled), lines, inlined frames,
the per-build-id cache, and the notes for missing debug info or changed binaries."""
import re
import subprocess
from pathlib import Path

import pytest

from heapscope.profile import read_profile
from heapscope.symbolize import Frame, SymbolCache, Symbolizer
from heapscope.symbolize.elf import read_elf
from helpers.profile_builder import ProfileBuilder
from helpers.program_addresses import program_addresses

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
SOURCE = "stk_symbols.cpp"
OUTSIDE = 0x10  # an address in no module


def line_of(path, mark):
    lines = path.read_text().splitlines()
    hits = [i + 1 for i, text in enumerate(lines) if f"LINE-MARK {mark}" in text]
    assert len(hits) == 1, mark
    return hits[0]


@pytest.fixture(scope="module")
def program(build):
    exe = build(SOURCE)
    info = dict(program_addresses(exe), exe=exe)
    assert info["ranges"] and len(info["addr"]) == 3
    info["src"] = PROGRAMS / SOURCE
    return info


def profile_for(tmp_path, program, exe=None, build_id=None):
    """A synthetic profile of one process running `exe` (default: the program)."""
    exe = str(exe or program["exe"])
    if build_id is None:
        build_id = bytes.fromhex(read_elf(str(program["exe"])).build_id)
    b = ProfileBuilder(exe=exe)
    frames = tuple(program["addr"].values()) + (OUTSIDE,)
    b.snapshot(sizes=[(0, 48, 1)], stacks=[(0, 48, 1, 48, frames)],
               modules=[(exe, program["bias"], build_id, program["ranges"])])
    return read_profile(b.write(tmp_path / "p.hsp"))


def resolve(tmp_path, profile, cache=None):
    sym = Symbolizer(cache or SymbolCache(tmp_path / "cache"))
    return sym, sym.resolve(profile, profile.stack_types[0].frames)


def test_names_lines_and_inlined_frames(tmp_path, program):
    p = profile_for(tmp_path, program)
    sym, frames = resolve(tmp_path, p)
    src, exe, a = program["src"], str(program["exe"]), program["addr"]
    assert sym.notes == []

    [tmpl] = frames[a["template-call"]]
    assert (tmpl.function, tmpl.line, tmpl.inlined) == (
        "solver::Matrix<double>::multiply()", line_of(src, "template-call"), False)
    assert tmpl.file.endswith("tests/programs/stk_symbols.cpp") and tmpl.module == exe
    assert tmpl.offset == a["template-call"] - 1 - program["bias"]

    inner, outer = frames[a["inlined-call"]]
    assert (inner.function, inner.line, inner.inlined) == (
        "inlined_helper", line_of(src, "inlined-call"), True)
    assert (outer.function, outer.line, outer.inlined) == (
        "outer_function(int)", line_of(src, "outer-call"), False)

    [c] = frames[a["c-call"]]
    assert (c.function, c.line) == ("plain_c_function", line_of(src, "c-call"))
    assert c.text() == f"plain_c_function @ {c.file}:{c.line} ({program['exe'].name})"
    assert inner.text().endswith(f":{line_of(src, 'inlined-call')} ({program['exe'].name}) [inlined]")

    assert frames[OUTSIDE] == [Frame("??", "", 0, "", OUTSIDE)]


def test_cache_serves_without_the_tool(tmp_path, program, monkeypatch):
    p = profile_for(tmp_path, program)
    _, first = resolve(tmp_path, p)
    build_id = read_elf(str(program["exe"])).build_id
    assert (tmp_path / "cache" / "symbols" / f"bid-{build_id}-dbg.json").is_file()
    monkeypatch.setenv("PATH", "/nonexistent")   # eu-addr2line is gone: only the cache can answer
    sym, second = resolve(tmp_path, p)
    assert second == first and sym.notes == []


def test_cache_write_failure_is_harmless(tmp_path, program):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    p = profile_for(tmp_path, program)
    sym, frames = resolve(tmp_path, p, cache=SymbolCache(blocker))
    assert frames[program["addr"]["c-call"]][0].function == "plain_c_function"


def test_without_debug_info_names_come_from_the_symbol_table(tmp_path, program):
    nodebug = tmp_path / "stk_nodebug"
    subprocess.run(["strip", "--strip-debug", "-o", str(nodebug), str(program["exe"])], check=True)
    p = profile_for(tmp_path, program, exe=nodebug)
    sym, frames = resolve(tmp_path, p)
    assert sym.notes == [f"no debug info for {nodebug}; install its -dbgsym package or rebuild with -g"]
    [c] = frames[program["addr"]["c-call"]]
    assert (c.function, c.file, c.line) == ("plain_c_function", "", 0)
    assert c.text() == f"plain_c_function (stk_nodebug+{c.offset:#x})"
    # The inlined frame exists only in DWARF: one frame, the real function.
    assert [f.function for f in frames[program["addr"]["inlined-call"]]] == ["outer_function(int)"]


def test_fully_stripped_gives_question_marks(tmp_path, program):
    stripped = tmp_path / "stk_stripped"
    subprocess.run(["strip", "-o", str(stripped), str(program["exe"])], check=True)
    p = profile_for(tmp_path, program, exe=stripped)
    sym, frames = resolve(tmp_path, p)
    # the program itself: said as such, with what to install (not "no debug info")
    assert sym.notes == [f"this program has no symbols: install its -dbgsym package or "
                         f"build with -g ({stripped}; its frames show as ?? (program+offset), "
                         f"which eu-addr2line resolves once the symbols are there)"]
    assert [f.function for f in frames[program["addr"]["c-call"]]] == ["??"]


def test_changed_or_missing_binary_is_noted(tmp_path, program):
    p = profile_for(tmp_path, program, build_id=bytes.fromhex("00112233445566778899"))
    sym, frames = resolve(tmp_path, p)
    assert len(sym.notes) == 1
    assert re.match(rf"{re.escape(str(program['exe']))} has changed since the recording "
                    r"\(build-id [0-9a-f]+, recorded 00112233445566778899\)", sym.notes[0])
    assert frames[program["addr"]["c-call"]][0].function == "??"

    gone = tmp_path / "gone" / "prog"
    p = profile_for(tmp_path, program, exe=gone)
    sym, frames = resolve(tmp_path, p)
    assert sym.notes == [f"{gone} is not on this machine; its frames show ?? "
                         f"(symbolize where the recorded binaries are, or re-record)"]
    assert frames[program["addr"]["c-call"]][0].module == str(gone)


def rebuilt_profile(tmp_path, program, name, addresses):
    """A profile recorded from the program (its build-id), whose recorded path now holds
    another build (here: a copy of /bin/true), as after a rebuild in place."""
    exe = tmp_path / "rebuilt"
    if not exe.exists():
        exe.write_bytes(Path("/bin/true").read_bytes())
    assert read_elf(str(exe)).build_id != read_elf(str(program["exe"])).build_id
    b = ProfileBuilder(exe=str(exe))
    b.snapshot(sizes=[(0, 48, 1)], stacks=[(0, 48, 1, 48, tuple(addresses))],
               modules=[(str(exe), program["bias"], bytes.fromhex(read_elf(str(program["exe"])).build_id),
                         program["ranges"])])
    return read_profile(b.write(tmp_path / name))


def test_rebuilt_binary_answered_from_the_cache_by_build_id(tmp_path, program, monkeypatch):
    """The build that ran was symbolized before (by record, or any report): its frames are
    named from the cache, the rebuilt binary on disk is never read, nothing is noted."""
    _, first = resolve(tmp_path, profile_for(tmp_path, program))
    addresses = list(program["addr"].values())
    monkeypatch.setenv("PATH", "/nonexistent")   # no eu-addr2line: the disk cannot answer
    sym, frames = resolve(tmp_path, rebuilt_profile(tmp_path, program, "r.hsp", addresses))
    assert sym.notes == []
    for a in addresses:
        assert [(f.function, f.file, f.line, f.inlined) for f in frames[a]] == \
            [(f.function, f.file, f.line, f.inlined) for f in first[a]]
        assert frames[a][0].module == str(tmp_path / "rebuilt")


def test_rebuilt_binary_partly_cached(tmp_path, program):
    """Only the c-call address was cached: it is named, the others show ??, and the note
    says which frames are lost."""
    a = program["addr"]
    sym = Symbolizer(SymbolCache(tmp_path / "cache"))
    sym.resolve(profile_for(tmp_path, program), [a["c-call"]])
    sym, frames = resolve(tmp_path, rebuilt_profile(tmp_path, program, "r.hsp", a.values()))
    assert frames[a["c-call"]][0].function == "plain_c_function"
    assert frames[a["template-call"]][0].function == "??"
    (note,) = sym.notes
    assert note.startswith(f"{tmp_path / 'rebuilt'} has changed since the recording")
    assert note.endswith("its frames not in the symbol cache show ?? (symbolize where the recorded "
                         "binaries are, or re-record)")


def test_addr2line_output_parsing():
    from heapscope.symbolize.addr2line import parse
    text = ("0x0000000000001176\n"
            "helper inlined at /s/a.cpp:30:19 in outer(int)\n/s/a.cpp:26:14\n"
            "outer(int)\n/s/a.cpp:30:19\n"
            "0x0000000000002000\n??\n??:0\n"
            "0x0000000000002010\nfoo\n/s/b.c:7\n")
    assert parse(text) == {
        0x1176: [("helper", "/s/a.cpp", 26, True), ("outer(int)", "/s/a.cpp", 30, False)],
        0x2000: [("??", "", 0, False)],
        0x2010: [("foo", "/s/b.c", 7, False)],
    }


def test_cache_location(monkeypatch, tmp_path):
    from heapscope.symbolize import cache_dir
    monkeypatch.delenv("HEAPSCOPE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "heapscope"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "heapscope"
    monkeypatch.setenv("HEAPSCOPE_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
