"""Packed blocks from operator new, decided per module (src/allocator/module.c): code
built by GCC only (its ELF .comment says "GCC: ..." and nothing else) gets the 8-byte
aligned classes (a 24-byte object in a 24-byte block); code without .comment (Debian
strips it), or built by clang, keeps C++'s 16-byte alignment (a 32-byte block).
HSMALLOC_PACKED=0: never packed; =all: always (tests/allocator/new_module.cpp,
new_module_lib.cpp)."""
import os
import shutil
import subprocess

import pytest

from helpers.elf import without_comment

PACKED = (32, 24)  # 64 objects of 24 bytes: half the 24-byte blocks are 8-aligned
ALIGNED = (0, 32)


def commented(path):
    res = subprocess.run(["readelf", "-p", ".comment", str(path)], capture_output=True, text=True)
    return res.stdout


@pytest.fixture(scope="module")
def prog(build):
    exe = build("../allocator/new_module.cpp", "-O1", "-ldl", name="new_module")
    lib = build("../allocator/new_module_lib.cpp", "-O1", "-shared", "-fPIC",
                name="new_module_lib.so")
    assert "GCC: " in commented(exe) and "GCC: " in commented(lib)
    nocomment = without_comment(exe), without_comment(lib)
    assert ".comment" not in commented(nocomment[0]) + commented(nocomment[1])
    return {"gcc": (exe, lib), "none": nocomment}


def run(exe, native, *libs, preload=(), cwd=None, **env):
    full = dict(os.environ, **env)
    full["LD_PRELOAD"] = " ".join([*map(str, preload), str(native / "lib" / "libhsmalloc.so")])
    res = subprocess.run([str(exe), *map(str, libs)], capture_output=True, text=True, env=full,
                         timeout=60, cwd=cwd)
    assert res.returncode == 0, res.stdout + res.stderr
    rows = [line.split() for line in res.stdout.splitlines()]
    return [(int(odd), int(usable)) for _, odd, usable in rows]


@pytest.mark.parametrize("packed, gcc, none", [("1", PACKED, ALIGNED), ("0", ALIGNED, ALIGNED),
                                               ("all", PACKED, PACKED)])
def test_the_program_module(prog, native, packed, gcc, none):
    assert run(prog["gcc"][0], native, HSMALLOC_PACKED=packed) == [gcc]
    assert run(prog["none"][0], native, HSMALLOC_PACKED=packed) == [none]


def test_each_library_decides_for_its_own_call_sites(prog, native):
    (exe, lib), (exe_none, lib_none) = prog["gcc"], prog["none"]
    assert run(exe, native, lib_none) == [PACKED, ALIGNED]
    assert run(exe_none, native, lib) == [ALIGNED, PACKED]


def test_a_library_loaded_where_another_was_unloaded_is_judged_anew(prog, native):
    """The two builds of the library are the same code, so a reload at the same base puts
    new's call site at the same address: the heaps must forget it at dlclose."""
    _, lib = prog["gcc"]
    _, lib_none = prog["none"]
    assert run(prog["gcc"][0], native, lib, lib_none, lib, lib_none) == \
        [PACKED, PACKED, ALIGNED, PACKED, ALIGNED]
    assert run(prog["gcc"][0], native, lib_none, lib, lib_none) == \
        [PACKED, ALIGNED, PACKED, ALIGNED]


@pytest.mark.parametrize("comment, want", [
    (b"GCC: (Debian 12.2.0-14) 12.2.0\0", PACKED),
    (b"GCC: (Debian 12.2.0-14) 12.2.0\0Debian clang version 14.0.6\0", ALIGNED),
    (b"GCC: (GNU) 13.2.0\0Linker: LLD 17.0.6\0", ALIGNED),
    (b"Intel(R) oneAPI DPC++/C++ Compiler 2024.0.0\0", ALIGNED),
    (b"GCC: (GNU) 4.8.5 (clang-compatible build)\0", ALIGNED)])
def test_the_comment_decides(build, native, tmp_path, comment, want):
    """The program's .comment replaced: GCC alone packs; clang beside GCC (objects of
    both compilers linked together), another linker or compiler, keep 16."""
    exe = build("../allocator/new_module.cpp", "-O1", "-ldl", name="new_module")
    mixed = tmp_path / "new_module-mixed"
    note = tmp_path / "note"
    note.write_bytes(comment)
    subprocess.run(["objcopy", "--remove-section=.comment", "--add-section",
                    f".comment={note}", str(exe), str(mixed)], check=True)
    assert comment.split(b"\0")[-2].decode()[:12] in commented(mixed)
    assert run(mixed, native) == [want]


def test_a_wrapper_of_new_hides_its_callers(prog, native, tmp_path):
    """heapscope's recorder preloaded before hsmalloc defines operator new and calls
    ours: the return address is in the recorder (built by GCC), the code that called new
    is unknown, so new keeps 16 even for the GCC-built program."""
    recorder = native / "lib" / "libheapscope.so"
    exe, lib = prog["gcc"]
    assert run(exe, native, lib, preload=[recorder], cwd=tmp_path) == [ALIGNED, ALIGNED]
    assert list(tmp_path.glob("*.hsp")), "the recorder did not run"


def test_a_library_rebuilt_while_loaded_says_nothing(prog, native, build, tmp_path):
    """The file on disk is no longer the one loaded (its segments differ): its
    .comment is not the loaded code's, so new keeps 16."""
    rebuilt = build("../allocator/new_module_lib.cpp", "-shared", "-fPIC",
                    name="new_module_lib-O0.so")
    loaded = tmp_path / "lib.so"
    shutil.copy(prog["none"][1], loaded)
    replacement = tmp_path / "replacement.so"
    shutil.copy(rebuilt, replacement)
    assert run(prog["gcc"][0], native, loaded, NEW_MODULE_REPLACE=str(replacement)) == \
        [PACKED, ALIGNED]
    assert run(prog["gcc"][0], native, loaded) == [PACKED, PACKED]  # now loaded as on disk
