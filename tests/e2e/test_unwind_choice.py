"""Unwinding choices explained: `--unwind fp` on code built without frame pointers (as
Debian builds its packages) says so in one line and unwinds with DWARF instead of
recording 1-frame stacks; on code with frame pointers it stays as asked; and
`record --help` lists every HEAPSCOPE_* variable the recorder reads."""
import glob
import json
import re

from conftest import TESTS
from heapscope.profile.reader import read_profile
from helpers.many_sites import leaf_paths, want_paths

DEBIAN = ("-O2", "-fomit-frame-pointer")
FELL_BACK = re.compile(r"--unwind fp: (\d+) of the first 32 stacks ended after 1 or 2 frames "
                       r"where the DWARF unwind found 3 more or over \(code built without frame "
                       r"pointers\): unwinding with DWARF instead")


def recorded_paths(heapscope, out):
    doc = json.loads(heapscope("stacks", out, "--size", "all", "--top", "0",
                               "--format", "json").stdout)
    return leaf_paths((g["size"], t["count"], [f["function"] for f in t["frames"]])
                      for g in doc["groups"] for t in g["stack_types"])


def unwinder(out):
    (path,) = glob.glob(str(out / "*.hsp"))
    return read_profile(path).settings["unwinder"]


def test_fp_without_frame_pointers_says_so_and_uses_dwarf(heapscope, build, tmp_path):
    """Without frame pointers every frame-pointer walk stops after a frame: the first
    32 stacks are unwound both ways (their DWARF frames kept), then one line, and
    DWARF for the rest. Every one of the 256 paths has its whole stack (on main, 95%
    of Octave's allocations had 1 or 2 frames this way), and the profile's settings
    say dwarf."""
    program = build("unw_many_sites.c", *DEBIAN)
    res = heapscope("record", "-o", tmp_path / "p", "--unwind", "fp", "--sizes", "all", "--",
                    program)
    lines = [line for line in res.stderr.splitlines() if FELL_BACK.search(line)]
    assert len(lines) == 1 and FELL_BACK.search(lines[0]).group(1) == "32", res.stderr
    assert recorded_paths(heapscope, tmp_path / "p") == want_paths()
    assert unwinder(tmp_path / "p") == "dwarf"


def test_fp_with_frame_pointers_stays(heapscope, build, tmp_path):
    """The same program with frame pointers: no line, frame pointers throughout (the
    walk ends in glibc's start-up, which has none: main is the last frame), the
    settings say so."""
    program = build("unw_many_sites.c", "-O2")  # the suite builds with frame pointers
    res = heapscope("record", "-o", tmp_path / "p", "--unwind", "fp", "--sizes", "all", "--",
                    program)
    assert not FELL_BACK.search(res.stderr), res.stderr
    assert recorded_paths(heapscope, tmp_path / "p") == want_paths()
    assert unwinder(tmp_path / "p") == "frame-pointers"


def test_record_help_lists_every_variable_the_recorder_reads(heapscope):
    """Every HEAPSCOPE_* name in the native sources (the recorder and the MPI layers
    read them with getenv, some through a helper taking the name) is explained in
    `record --help`, the unwind cache's switch among them."""
    names = set()
    for path in (TESTS.parent / "src").rglob("*.[ch]"):
        names.update(re.findall(r'"(HEAPSCOPE_[A-Z0-9_]+)"', path.read_text(errors="replace")))
    assert {"HEAPSCOPE_UNWIND_CACHE", "HEAPSCOPE_UNWIND_STATS", "HEAPSCOPE_OUTPUT_DIR"} <= names
    helptext = heapscope("record", "--help").stdout
    missing = sorted(n for n in names if not re.search(rf"\b{n}\b", helptext))
    assert not missing, missing
