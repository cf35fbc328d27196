"""When `callgraph`, `export` or `stacks` find no stack trace type of the selection, the one
line says why, with what the recording covered (analysis.recorded): sizes it did not record
(and the command that would), sizes it recorded but the program never allocated, or stacks
lost to a full table. On tests/programs/diff_variant.c (sizes 12, 16, 40, 64 in regions
build and solve)."""
import pytest

from helpers.profile_builder import ProfileBuilder


@pytest.fixture(scope="module")
def recordings(build, heapscope, tmp_path_factory):
    root = tmp_path_factory.mktemp("reasons")
    exe = build("diff_variant.c")
    for name, opts in (("all", ["--sizes", "all"]), ("some", ["--sizes", "12,40-50", "--regions", "build"]),
                       ("allbuild", ["--sizes", "all", "--regions", "build"]), ("none", [])):
        heapscope("record", "-o", root / name, *opts, "--", exe)
    return root, exe


def error_line(heapscope, *args):
    res = heapscope(*args, check=False)
    assert res.returncode == 2 and res.stdout == "", (res.stdout, res.stderr)
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("heapscope: error: ")
    return line[len("heapscope: error: "):]


COMMANDS = [["callgraph", "--format", "json", "-o", "{t}/cg"],
            ["export", "--format", "collapsed", "-o", "{t}/out"],
            ["export", "--format", "pprof", "-o", "{t}/out"]]


@pytest.mark.parametrize("cmd", COMMANDS, ids=["callgraph", "collapsed", "pprof"])
def test_size_recorded_but_never_allocated(cmd, recordings, heapscope, tmp_path):
    root, _ = recordings
    cmd = [c.format(t=tmp_path) for c in cmd]
    assert error_line(heapscope, cmd[0], root / "all", *cmd[1:], "--size", "99999") == (
        "no allocation of size 99999 in the profiles: the program made none (stacks were recorded "
        "for every size; `heapscope report` lists the sizes it allocated)")
    # 64-byte blocks exist, in region solve only
    assert error_line(heapscope, cmd[0], root / "all", *cmd[1:], "--size", "64", "--region", "build") == (
        "no allocation of size 64 in region build in the profiles: the program made none (stacks "
        "were recorded for every size; `heapscope report` lists the sizes it allocated)")
    assert error_line(heapscope, cmd[0], root / "some", *cmd[1:], "--size", "45") == (
        "no allocation of size 45 in the profiles: the program made none (stacks were recorded "
        "for sizes 12,40-50 in regions build; `heapscope report` lists the sizes it allocated)")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("cmd", COMMANDS, ids=["callgraph", "collapsed", "pprof"])
def test_size_or_region_not_recorded(cmd, recordings, heapscope, tmp_path):
    root, exe = recordings
    cmd = [c.format(t=tmp_path) for c in cmd]
    assert error_line(heapscope, cmd[0], root / "some", *cmd[1:], "--size", "64") == (
        f"no stacks recorded for size 64 (stacks were recorded for sizes 12,40-50 in regions build); "
        f"record them with: heapscope record --sizes 64 -- {exe}")
    assert error_line(heapscope, cmd[0], root / "allbuild", *cmd[1:], "--size", "64", "--region", "solve") == (
        f"no stacks recorded for size 64 in region solve (stacks were recorded for every size in regions "
        f"build); record them with: heapscope record --sizes 64 --regions solve -- {exe}")
    assert error_line(heapscope, cmd[0], root / "none", *cmd[1:], "--size", "12") == (
        f"no stacks recorded for size 12 (the profile recorded no stacks); record them with: "
        f"heapscope record --sizes 12 -- {exe}")


def test_the_recorded_selection_works(recordings, heapscope, tmp_path):
    root, _ = recordings
    res = heapscope("export", root / "some", "--format", "collapsed", "--size", "12,40-50", "-o", "-")
    weights = sorted(int(line.rsplit(" ", 1)[1]) for line in res.stdout.splitlines())
    assert weights == [100, 300]
    stacks = heapscope("stacks", root / "all", "--size", "99999")
    assert stacks.returncode == 0 and "the program made none there" in stacks.stdout


def test_allocations_counted_but_stacks_lost(heapscope, tmp_path):
    """The stack table was full: allocations are counted, none has a stack to show."""
    b = ProfileBuilder(stack_sizes="12", cmdline=("./sim",))
    b.snapshot(regions=[(1, 0, "local")], sizes=[(1, 12, 5)], lost=5)
    path = b.write(tmp_path / "lost.hsp")
    res = heapscope("callgraph", path, "--size", "12", "-o", tmp_path / "cg", check=False)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip().splitlines() == [   # the reader's warning, then the error
        f"heapscope: {path}: 5 allocations of the selected sizes lost their stacks (the stack "
        f"table was full)",
        "heapscope: error: no stack trace types of size 12: 5 allocations were counted, none with "
        "a stored stack (5 allocations lost their stack: the stack table was full)"]


def test_size_all_on_a_recording_of_some_sizes(recordings, heapscope, tmp_path):
    """`--size all` (what the README recommends) on a `--sizes 12,40-50 --regions build`
    recording: every size it recorded, with a note saying which those were (it was an
    error: "no stacks recorded for size all")."""
    import json
    root, _ = recordings
    note = ("--size all: every size whose stacks were recorded (stacks were recorded for "
            "sizes 12,40-50 in regions build)")
    res = heapscope("stacks", root / "some", "--size", "all", "--format", "json")
    doc = json.loads(res.stdout)
    assert res.returncode == 0 and doc["not_recorded"] == [] and note in doc["notes"]
    assert sorted((g["size"], g["region"], g["count"]) for g in doc["groups"]) == [
        (12, "build", 300), (40, "build", 100)]
    assert note in heapscope("stacks", root / "some", "--size", "all").stdout
    cg = json.loads(heapscope("callgraph", root / "some", "--size", "all", "--format", "json",
                              "-o", "-").stdout)
    assert note in cg["notes"]
    # a recording of every size says nothing more
    doc = json.loads(heapscope("stacks", root / "all", "--size", "all", "--format", "json").stdout)
    assert not any(n.startswith("--size all") for n in doc["notes"])
