"""The fix-and-compare workflow with a program rebuilt in place: record, rebuild the same
path with a change (a new build-id), record again, `diff --stacks`. `heapscope record`
symbolizes the stacks into the per-build-id cache as it ends, and the symbolizer asks
the cache by build-id before the binary on disk, so the first build's frames keep their
names and the unchanged stack trace types match. On tests/programs/diff_variant.c, whose
-DFIXED variant keeps every line in place (expected figures: tests/helpers/diff_variant.py)."""
import json

import pytest

from conftest import compile_program
from heapscope.symbolize.elf import read_elf
from helpers.diff_variant import STACKS, line_of


@pytest.fixture
def workflow(native, heapscope, tmp_path):
    """record(side, *options) records bin/diff_variant (built as `side` first) with its
    own symbol cache; the program is rebuilt in place when the side changes."""
    exe = tmp_path / "bin" / "diff_variant"
    exe.parent.mkdir()
    env = {"HEAPSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    build_ids = {}

    def record(side, *options):
        compile_program(native, "diff_variant.c", exe, *(("-DFIXED",) if side == "after" else ()))
        build_ids[side] = read_elf(str(exe)).build_id
        heapscope("record", "-o", tmp_path / side, "--sizes", "all", *options, "--", exe, env=env)
        return tmp_path / side

    def run(*args, check=True):
        return heapscope(*args, env=env, check=check)

    return record, run, build_ids, tmp_path / "cache" / "symbols"


def stack_rows(doc):
    return [(s["region"], s["size"], s["count_a"], s["count_b"], s["status"], s["frames"][0]["function"],
             s["frames"][0]["line"]) for s in doc["stacks"]]


def expected():
    return [(r, size, ca, cb, st, fn, line_of(mark)) for r, size, ca, cb, st, fn, mark in STACKS]


def test_rebuilt_in_place_unchanged_stacks_still_match(workflow):
    record, run, build_ids, cache = workflow
    a = record("before")
    assert (cache / f"bid-{build_ids['before']}-dbg.json").is_file()   # filled as record ended
    b = record("after")
    assert build_ids["before"] != build_ids["after"]
    res = run("diff", a, b, "--stacks", "--format", "json")
    assert "has changed since the recording" not in res.stderr and "??" not in res.stdout
    doc = json.loads(res.stdout)
    assert stack_rows(doc) == expected()
    assert [(m["before"], m["after"]) for m in doc["path_migrations"]] == [([[12, 300]], [[24, 150]])]
    text = run("diff", a, b, "--stacks").stdout
    assert "(5 changed, 1 unchanged)" in text
    assert "  path changed size in build: 12 B x300 -> 24 B x150: make_pairs <- main <- " in text
    stacks = run("stacks", a, "--size", "40", "--format", "json")   # every report reads the old build
    frames = json.loads(stacks.stdout)["groups"][0]["stack_types"][0]["frames"]
    assert [(f["function"], f["line"]) for f in frames[:2]] == [("make_nodes", line_of("nodes")),
                                                                ("main", line_of("main-nodes"))]
    assert stacks.stderr == ""


def test_symbolized_before_the_rebuild_is_enough(workflow):
    """--no-symbolize at record, but a report read the profile before the rebuild: the
    cache it filled is asked first too."""
    record, run, _, _ = workflow
    a = record("before", "--no-symbolize")
    run("stacks", a, "--size", "all")
    b = record("after", "--no-symbolize")
    doc = json.loads(run("diff", a, b, "--stacks", "--format", "json").stdout)
    assert stack_rows(doc) == expected()


def test_no_symbolize_leaves_the_old_build_unreadable(workflow):
    """What the default prevents: nothing cached, the old build's frames are ?? after the
    rebuild, so no stack type of A matches one of B (the unchanged 40-byte type shows as
    gone and new) and a note says why."""
    record, run, build_ids, cache = workflow
    a = record("before", "--no-symbolize")
    assert not cache.exists()
    b = record("after", "--no-symbolize")
    res = run("diff", a, b, "--stacks", "--format", "json")
    assert f"has changed since the recording (build-id {build_ids['after']}, recorded " \
           f"{build_ids['before']}); its frames show ??" in res.stderr
    rows = [(s["region"], s["size"], s["count_a"], s["count_b"], s["status"])
            for s in json.loads(res.stdout)["stacks"]]
    assert sorted(rows) == sorted([("build", 40, 100, 0, "gone"), ("build", 40, 0, 100, "new"),
                                   ("build", 12, 300, 0, "gone"), ("build", 24, 0, 150, "new"),
                                   ("solve", 64, 50, 0, "gone"), ("solve", 64, 0, 80, "new"),
                                   ("solve", 16, 20, 0, "gone"), ("solve", 32, 0, 30, "new")])


def test_only_recordings_with_stacks_are_symbolized(native, heapscope, tmp_path):
    exe = compile_program(native, "diff_variant.c", tmp_path / "diff_variant")
    env = {"HEAPSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    heapscope("record", "-o", tmp_path / "counts", "--", exe, env=env)
    assert not (tmp_path / "cache").exists()   # counts only: no frame to look up
    heapscope("record", "-o", tmp_path / "stacks", "--sizes", "40", "--", exe, env=env)
    cached = json.loads((tmp_path / "cache" / "symbols" /
                         f"bid-{read_elf(str(exe)).build_id}-dbg.json").read_text())
    names = {e[0] for entries in cached["frames"].values() for e in entries}
    assert {"make_nodes", "main"} <= names and "make_pairs" not in names   # only size 40's path


def test_sampled_stacks_are_symbolized_at_record_time(native, heapscope, tmp_path):
    """--sample-bytes records stacks of every size: they are symbolized as record ends,
    as --sizes' are (a sample every byte: every allocation's stack)."""
    exe = compile_program(native, "diff_variant.c", tmp_path / "diff_variant")
    env = {"HEAPSCOPE_CACHE_DIR": str(tmp_path / "cache")}
    heapscope("record", "-o", tmp_path / "sampled", "--sample-bytes", "1", "--", exe, env=env)
    cached = json.loads((tmp_path / "cache" / "symbols" /
                         f"bid-{read_elf(str(exe)).build_id}-dbg.json").read_text())
    names = {e[0] for entries in cached["frames"].values() for e in entries}
    assert {"make_nodes", "make_pairs", "make_temps", "make_scratch", "main"} <= names


def test_unwritable_cache_warns_and_keeps_the_exit_code(native, heapscope, tmp_path):
    exe = compile_program(native, "diff_variant.c", tmp_path / "diff_variant")
    blocker = tmp_path / "cache-file"
    blocker.write_text("a file where the cache directory should be")
    res = heapscope("record", "-o", tmp_path / "out", "--sizes", "40", "--", exe,
                    env={"HEAPSCOPE_CACHE_DIR": str(blocker)})
    assert res.returncode == 0
    warning = res.stderr.strip().splitlines()[-1]
    assert warning.startswith(f"heapscope: warning: stacks not symbolized at record time: the symbol "
                              f"cache {blocker}/symbols is not writable: ")
    assert warning.endswith(" frames not cached")


def test_a_failure_while_symbolizing_keeps_the_programs_exit_code(tmp_path, monkeypatch, capsys):
    from heapscope import cli
    from heapscope.symbolize import warm as warm_module

    def broken(files):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(warm_module, "warm", broken)
    monkeypatch.setenv("HEAPSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HEAPSCOPE_DEBUG", raising=False)
    rc = cli.main(["record", "-o", str(tmp_path / "out"), "--sizes", "all", "--", "sh", "-c", "exit 5"])
    assert rc == 5 and list((tmp_path / "out").glob("*.hsp"))   # 3 would be an internal error
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "heapscope: warning: stacks not symbolized at record time: RuntimeError: disk on fire "
        "(the profiles are complete)")
