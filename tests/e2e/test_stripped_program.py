"""A program without symbols (stripped, no debug information: Debian's pw.x): every
command that shows frames says so once, with what to install, and the call graph still
ranks its frames by module and offset, which eu-addr2line resolves once the symbols are
there (docs/ranking.md, "Stripped programs")."""
import json
import shutil
import subprocess

from conftest import compile_program, require

NOTE = "this program has no symbols: install its -dbgsym package or build with -g"


def stripped(native, tmp_path):
    """rank_init_vs_mesh.c built with -g and a stripped copy: (stripped, with symbols).
    A build-id of its own: the symbol cache answers for a build-id it has seen with
    symbols (the other tests' build of the same source), stripped copy or not."""
    require("strip", "eu-addr2line")
    full = compile_program(native, "rank_init_vs_mesh.c", tmp_path / "mesh_full",
                           "-Wl,--build-id=uuid")
    bare = tmp_path / "mesh_stripped"
    shutil.copy(full, bare)
    subprocess.run(["strip", "--strip-all", bare], check=True)
    return bare, full


def test_a_stripped_program_is_ranked_by_module_and_offset(native, heapscope, tmp_path):
    bare, full = stripped(native, tmp_path)
    out = tmp_path / "prof"
    heapscope("record", "-o", out, "--sizes", "32", "--", bare)
    res = heapscope("callgraph", out, "--size", "32", "--format", "json", "--top", "0")
    doc = json.loads(res.stdout)
    # every path kept: its frames are told apart by offset (before: all ?? of the
    # program were one frame, and the 121 paths merged into 2)
    assert (doc["types"], doc["count"]) == (121, 16960)
    first = doc["ranking"][0]
    assert first["function"].startswith("?? (mesh_stripped+0x") and first["count"] == 16000

    def resolved(rows):   # each function is named by where it starts: resolve it
        offsets = [r["function"].split("+")[1].rstrip(")") for r in rows]
        return subprocess.run(["eu-addr2line", "-f", "-e", full, *offsets], capture_output=True,
                              text=True, check=True).stdout.splitlines()[::2]
    # the same ranking as with names: register_item (one malloc in a loop, called from
    # four lines) and init_fields are small kernels, not wrappers, read from their code
    # (before: taken for wrappers, being entered from more call sites than they allocate
    # from; initialize_comm ranked third)
    assert resolved(doc["ranking"][:4]) == ["mesh_refine", "timestep", "register_item",
                                            "init_fields"]
    assert doc["wrappers"] == []
    own = [v for v in doc["vertices"] if v["function"].startswith("?? (mesh_stripped+")]
    init = dict(zip(resolved(own), own))["initialize_comm"]
    assert (init["kind"], init["rank"], init["count"]) == ("driver", None, 960)
    # said once, in the result (JSON: its notes; text: its note lines)
    assert [n for n in doc["notes"] if NOTE in n] and NOTE not in res.stderr
    text = heapscope("callgraph", out, "--size", "32")
    assert "No user-code vertex" not in text.stdout
    assert (text.stdout + text.stderr).count(NOTE) == 1


def test_every_command_showing_frames_says_once_the_program_has_no_symbols(native, heapscope,
                                                                             tmp_path):
    bare, _ = stripped(native, tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        heapscope("record", "--track", "--sizes", "all", "-o", out, "--", bare)
    page = tmp_path / "page.html"
    commands = [("stacks", a, "--size", "32"), ("callgraph", a, "--size", "32"), ("peak", a),
                ("leaks", a), ("temporaries", a), ("lifetimes", a), ("diff", a, b, "--stacks"),
                ("export", a, "--format", "json", "-o", tmp_path / "stacks.json"),
                ("html", a, "-o", page)]
    for command in commands:
        res = heapscope(*command)
        assert (res.stdout + res.stderr).count(NOTE) == (0 if command[0] == "html" else 1), command
    assert page.read_text().count(NOTE) == 1
    # a report without frames has nothing to say about them
    res = heapscope("report", a)
    assert NOTE not in res.stdout + res.stderr
