"""Fortran names read as Fortran in every output: tests/programs/fortran_names.f90 (the
module procedure mesh_mod::build, gfortran's __mesh_mod_MOD_build, allocates 800 bytes
5 times; the main program mesh_prog, gfortran's MAIN__, 240 bytes 3 times), built with
debug information and without. The stacks report, its JSON (the raw symbol beside the
name), the call graph's ranking (the main program an entry point, never a fix
target), the collapsed and pprof exports (the symbol as pprof's system name) and the
HTML page all say mesh_mod::build; the main
program is mesh_prog (DWARF's name) or, without -g, "main program (fortran_names.f90)"
(the source file .symtab names)."""
import json
import re
import subprocess

import pytest

from conftest import PROGRAMS, require
from helpers.pprof_profile import read_pprof

SOURCE = "fortran_names.f90"


@pytest.fixture(scope="module", params=["debug", "symtab"])
def recorded(request, heapscope, tmp_path_factory):
    require("gfortran")
    tmp = tmp_path_factory.mktemp(f"fortran-{request.param}")
    program = tmp / "fortran_names"
    flags = ["-g"] if request.param == "debug" else []
    subprocess.run(["gfortran", *flags, "-O0", "-J", tmp, "-o", program, PROGRAMS / SOURCE],
                   check=True)      # (-J: the module file in tmp, not the current directory)
    heapscope("record", "-o", tmp / "rec", "--sizes", "800,240", "--", program)
    main = "mesh_prog" if request.param == "debug" else f"main program ({SOURCE})"
    return tmp / "rec", main, request.param


def test_stacks_text_and_json(heapscope, recorded):
    rec, main, kind = recorded
    text = heapscope("stacks", rec, "--size", "800,240").stdout
    assert "__mesh_mod_MOD_build" not in text and "MAIN__" not in text
    where = f" @ {PROGRAMS / SOURCE}:" if kind == "debug" else " (fortran_names+0x"
    assert f"[0] mesh_mod::build{where}" in text and f"[1] {main}{where}" in text
    assert f"[0] {main}{where}" in text                       # the program's own 240 bytes
    doc = json.loads(heapscope("stacks", rec, "--size", "800,240", "--format", "json").stdout)
    groups = {g["size"]: g for g in doc["groups"]}
    assert groups[800]["count"] == 5 and groups[240]["count"] == 3
    build, caller = groups[800]["stack_types"][0]["frames"][:2]
    assert (build["function"], build["symbol"]) == ("mesh_mod::build", "__mesh_mod_MOD_build")
    assert caller["function"] == main
    # with DWARF, eu-addr2line names the main program itself: no symbol to keep
    assert caller.get("symbol") == (None if kind == "debug" else "MAIN__")


def test_callgraph_ranks_the_module_procedure_not_the_main_program(heapscope, recorded, tmp_path):
    rec, main, kind = recorded
    doc = json.loads(heapscope("callgraph", rec, "--size", "800", "--format", "json").stdout)
    ranked = [v["function"] for v in doc["ranking"]]
    assert ranked[0] == "mesh_mod::build"
    if kind == "symtab":                     # MAIN__: an entry point, as C's main
        assert main not in ranked
    text = heapscope("callgraph", rec, "--size", "800", "--dot", tmp_path / "cg.dot").stdout
    assert "mesh_mod::build" in text and "__mesh_mod_MOD" not in text
    dot = (tmp_path / "cg.dot").read_text()
    assert "mesh_mod::build" in dot and "__mesh_mod_MOD" not in dot


def test_collapsed_and_pprof_exports_and_the_page(heapscope, recorded, tmp_path):
    rec, main, kind = recorded
    heapscope("export", rec, "--format", "pprof", "--size", "800", "-o", tmp_path / "p.pb.gz")
    pprof = read_pprof(tmp_path / "p.pb.gz")
    assert pprof.system_names["mesh_mod::build"] == "__mesh_mod_MOD_build"   # pprof's system_name
    collapsed = heapscope("export", rec, "--format", "collapsed", "--size", "800",
                          "-o", tmp_path / "c.txt")
    lines = (tmp_path / "c.txt").read_text().splitlines()
    assert collapsed.returncode == 0 and len(lines) == 1
    assert re.search(rf";{re.escape(main)};mesh_mod::build 5$", lines[0]), lines
    heapscope("html", rec, "-o", tmp_path / "page.html")
    page = (tmp_path / "page.html").read_text()
    assert "mesh_mod::build" in page and "__mesh_mod_MOD_build" not in page
    assert json.dumps(main)[1:-1] in page
