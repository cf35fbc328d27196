"""`heapscope report --by library`: heap blocks go to the shared object that asked for them
(first frame outside the C/C++ runtime), on real recordings of programs with known
allocations: a main program with a library of its own, and an MPI all-to-all run."""
import csv
import io
import json
import subprocess

from heapscope.profile import read_profile

from conftest import PROGRAMS, require


def _owner_program(build, tmp_path):
    lib = build("lib_owner.c", "-shared", "-fPIC", name="liblib_owner.so")
    return build("lib_owner_main.c", str(lib), f"-Wl,-rpath,{lib.parent}", name="lib_owner_main"), lib


def _sizes(lib: dict) -> dict:
    return {s["size"]: s["count"] for s in lib["sizes"]}


def test_blocks_go_to_the_main_program_and_to_its_library(heapscope, build, tmp_path):
    program, lib = _owner_program(build, tmp_path)
    out = tmp_path / "all"
    heapscope("record", "--sizes", "all", "-o", out, "--", program)
    res = heapscope("report", "--by", "library", out, "--format", "json")
    doc = json.loads(res.stdout)
    libs = {d["library"]: d for d in doc["libraries"]}
    mine = {1111, 23, 3636, 3333, 4444}
    # strdup and calloc are libc frames: the block belongs to their caller
    assert {s: n for s, n in _sizes(libs[str(lib)]).items() if s in mine} == {1111: 7, 23: 7, 3636: 7}
    assert {s: n for s, n in _sizes(libs[str(program)]).items() if s in mine} == {3333: 5, 4444: 2, 23: 4}
    assert not any(s in mine for d in doc["libraries"] if d["library"] not in (str(lib), str(program))
                   for s in _sizes(d))
    assert doc["no_stack"]["count"] == 0
    profile = read_profile(next(out.glob("*.hsp")))
    assert doc["totals"]["count"] == sum(profile.size_counts.values())
    assert sum(d["count"] for d in doc["libraries"]) == doc["totals"]["count"]

    text = heapscope("report", "--by", "library", out, "--size", "1111,3333,4444,23,3636").stdout
    rows = {l.split()[0]: l.split() for l in text.splitlines() if l.startswith("  lib")}
    assert rows[lib.name][1:2] == ["21"] and rows[lib.name][3] == f"{7 * 1111 + 7 * 23 + 7 * 3636:,}"
    assert rows[program.name][1:2] == ["11"] and rows[program.name][3] == f"{5 * 3333 + 2 * 4444 + 4 * 23:,}"

    table = list(csv.DictReader(io.StringIO(heapscope("report", "--by", "library", out, "--size",
                                                      "23", "--format", "csv").stdout)))
    per_size = {(r["name"], r["size"]): int(r["count"]) for r in table}
    assert per_size[(lib.name, "23")] == 7 and per_size[(program.name, "23")] == 4


def test_sizes_without_stacks_are_reported_not_dropped(heapscope, build, tmp_path):
    program, lib = _owner_program(build, tmp_path)
    out = tmp_path / "some"
    heapscope("record", "--sizes", "1111,3333", "-o", out, "--", program)
    doc = json.loads(heapscope("report", "--by", "library", out, "--format", "json").stdout)
    libs = {d["library"]: _sizes(d) for d in doc["libraries"]}
    assert libs == {str(lib): {1111: 7}, str(program): {3333: 5}}
    rest = {s["size"]: s["count"] for s in doc["no_stack"]["sizes"]}
    assert rest[23] == 11 and rest[3636] == 7 and rest[4444] == 2
    assert doc["recorded_sizes"] == ["1111,3333"]
    text = heapscope("report", "--by", "library", out).stdout
    assert "(no stack)" in text and "record with --sizes all" in text


def test_no_stacks_at_all_is_a_one_line_error(heapscope, build, tmp_path):
    program, _ = _owner_program(build, tmp_path)
    out = tmp_path / "counts"
    heapscope("record", "-o", out, "--", program)
    res = heapscope("report", "--by", "library", out, check=False)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.strip().count("\n") == 0 and "--sizes all" in res.stderr
    res = heapscope("report", "--by", "library", out, "--top", "3", check=False)
    assert res.returncode == 2 and "--top applies to --by size" in res.stderr


def test_mpi_library_blocks_go_to_mpi_and_buffers_to_the_application(heapscope, tmp_path):
    require("mpicc", "mpirun")
    program = tmp_path / "mpi_alltoall"
    subprocess.run(["mpicc", "-g", "-o", program, PROGRAMS / "mpi_alltoall.c"], check=True)
    out = tmp_path / "out"
    heapscope("record", "--mpi", "--sizes", "all", "-o", out, "--", "mpirun", "--oversubscribe",
              "--allow-run-as-root", "-np", "4", program)
    ranks = {p.rank: p for p in map(read_profile, out.glob("*.hsp")) if p.rank >= 0}
    assert sorted(ranks) == [0, 1, 2, 3]
    for rank, p in ranks.items():
        doc = json.loads(heapscope("report", "--by", "library", p.path, "--format", "json").stdout)
        libs = {d["library"]: d for d in doc["libraries"]}
        app = libs[str(program)]
        assert _sizes(app) == {4000000: 10, 16000: 2}, rank   # its own buffers, nothing else
        assert app["in_mpi_count"] == 0
        mpi_blocks = sum(n for (r, s), n in p.size_counts.items() if r == "[MPI]")
        assert sum(d["in_mpi_count"] for d in doc["libraries"]) == mpi_blocks
        names = {d["name"] for d in doc["libraries"] if d["in_mpi_count"]}
        assert {"libopen-pal.so.40", "libmpi.so.40"} <= names, names
        assert not any(n.startswith(("libc.so", "libheapscope")) for n in names)
