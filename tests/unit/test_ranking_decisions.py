"""Where the allocation pattern is decided (docs/ranking.md), on symbolized stacks built by
hand: wrappers seen through, drivers below the trunk, stacks cut short by the depth
limit, an application's libraries by its source package, a stripped program's frames."""
import subprocess

import pytest

from conftest import PROGRAMS, require
from heapscope.analysis import classify as kinds
from heapscope.analysis.callgraph import build_callgraph, vertex
from heapscope.analysis.stacks import WeightedStack, merge_stacks
from heapscope.analysis.wrappers import says_it_allocates
from heapscope.render.html import stacks as page_section
from heapscope.symbolize import packages
from heapscope.symbolize.elf import function_starts
from heapscope.symbolize.frames import Frame

EXE = "/home/dev/app/bin/app"
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
START = ("main", "__libc_start_call_main", "__libc_start_main_impl", "_start")


def f(function, line=0, module=EXE, file="/home/dev/app/src/app.c"):
    return Frame(function, file if module == EXE and function != "??" else "", line, module,
                 line or 1)


def stack(*names, count, size=48, module=EXE):
    """A stack innermost first: malloc, then `names` (str: a user function in the program,
    or a Frame), then the program's start."""
    frames = [f("malloc", module=LIBC)]
    frames += [n if isinstance(n, Frame) else f(n, 10 + i, module) for i, n in enumerate(names)]
    frames += [f(n, 99) if n == "main" else f(n, module=LIBC) for n in START]
    return WeightedStack(tuple(frames), count, count * size, "", size)


def test_names_that_say_a_function_hands_out_memory():
    for name in ("app_malloc", "xcalloc(unsigned long, unsigned long)", "allocate",
                 "LAMMPS_NS::Memory::smalloc(long, char const*)", "newElement", "make_matrix",
                 "N_VCloneEmpty_Serial", "MFace::MFace(MVertex*, MVertex*)", "PetscStrallocpy"):
        assert says_it_allocates(name), name
    for name in ("kernel", "register_item", "sortVertices(std::vector<MVertex*>&)", "refine",
                 "dealloc_cells", "insertVertexB(double)", "Array<double>::resize1(long)"):
        assert not says_it_allocates(name), name


def test_a_chain_of_makers_entered_from_one_place_is_seen_through():
    # N_VClone (from two places) -> N_VClone_Serial -> N_VCloneEmpty_Serial -> N_VNewEmpty
    # -> malloc, N_VCloneEmpty_Serial also allocating the content itself
    chain = ("N_VNewEmpty", "N_VCloneEmpty_Serial", "N_VClone_Serial", "N_VClone")
    own = ("N_VCloneEmpty_Serial", "N_VClone_Serial", "N_VClone")
    g = build_callgraph([stack(*chain, "resize_vec", "main", count=500),
                         stack(*own, "resize_vec", "main", count=500),
                         stack(*chain, "make_solver", "main", count=100),
                         stack(*own, "make_solver", "main", count=100)], main_executable=EXE)
    assert [v.function for v in g.ranking] == ["resize_vec", "make_solver"]
    assert all(vertex(g, name).wrapper for name in chain)
    # a maker whose one caller is no wrapper, called from one place, is where it is decided
    g = build_callgraph([stack("app_malloc", "allocate", "setup", "main", count=600),
                         stack("app_malloc", "read_input", "main", count=1)], main_executable=EXE)
    assert [v.function for v in g.ranking] == ["allocate", "read_input"]
    assert vertex(g, "app_malloc").wrapper and not vertex(g, "allocate").wrapper


def test_a_maker_called_only_by_main_is_no_wrapper():
    g = build_callgraph([stack("make_key", "main", count=5000)], main_executable=EXE)
    assert [v.function for v in g.ranking] == ["make_key"] and not vertex(g, "make_key").wrapper


def test_drivers_below_the_trunk_are_not_ranked_nor_what_they_decide_counted_above():
    # an interpreter: run -> {script, startup} -> ... -> statement -> {assign, call}, which
    # meet again in evaluate; script's loop passes 96% to statement and allocates its loop
    # variable itself
    g = build_callgraph([
        stack("node_value", "evaluate", "assign", "statement", "loop", "script", "run", "main",
              count=3000),
        stack("node_value", "evaluate", "call", "statement", "loop", "script", "run", "main",
              count=2000),
        stack("loop_variable", "loop", "script", "run", "main", count=200),
        stack("node_value", "evaluate", "assign", "statement", "startup", "run", "main",
              count=2000),
        stack("index_list", "call", "statement", "startup", "run", "main", count=800)],
        main_executable=EXE)
    kind = {v.function: "driver" if v.driver else "trunk" if v.trunk else v.kind
            for v in g.vertices.values() if v.kind == kinds.USER}
    assert kind == {"run": "trunk", "statement": "driver", "loop": "driver", "script": "driver",
                    "startup": "driver", "assign": "user", "call": "user", "evaluate": "user",
                    "node_value": "user", "index_list": "user", "loop_variable": "user"}
    assert g.ranking[0].function == "node_value"
    assert not {"statement", "loop", "script", "startup"} & {v.function for v in g.ranking}
    # what loop repeats itself is its loop variable: the statements are decided below it
    loop = vertex(g, "loop")
    assert (loop.count, loop.repeats) == (5200, 199)


def test_stacks_cut_short_by_the_depth_limit_keep_the_trunk():
    # 20% of the allocations come along stacks cut at 64 frames: they start in `solve`,
    # with no entry point; before, the trunk walk from the root stopped at once and the
    # driver `run` ranked first
    whole = [stack("kernel_a", "solve", "run", "main", count=6000),
             stack("kernel_b", "solve", "run", "main", count=2000)]
    cut = WeightedStack((f("malloc", module=LIBC), f("kernel_b", 11), f("deep", 12), f("solve", 13)),
                        2000, 2000 * 48, "", 48)
    g = build_callgraph(whole + [cut], main_executable=EXE)
    assert vertex(g, "run").trunk and vertex(g, "solve").trunk
    assert [v.function for v in g.ranking][:2] == ["kernel_a", "kernel_b"]


OCTAVE = "/usr/bin/octave-cli"
INTERP = "/usr/lib/x86_64-linux-gnu/octave/7.3.0/liboctinterp.so.10"
LIBOCTAVE = "/usr/lib/x86_64-linux-gnu/octave/7.3.0/liboctave.so.9"


def _octave_stacks():
    """main (stripped) -> the interpreter's library -> liboctave's resize1, which only the
    interpreter calls: liboctave is not a library the program's start calls."""
    resize = Frame("Array<double>::resize1(long, double const&)", "", 0, LIBOCTAVE, 0x3376c2)
    assign = Frame("Array<double>::assign(idx_vector const&)", "", 0, LIBOCTAVE, 0x33ac89)
    evaluate = Frame("octave::tree_simple_assignment::evaluate(int)", "", 0, INTERP, 0xacbd1e)
    execute = Frame("octave::interpreter::execute()", "", 0, INTERP, 0xe8c0e8)
    main = Frame("??", "", 0, OCTAVE, 0x246b)
    start = (Frame("__libc_start_call_main", "", 0, LIBC, 1), Frame("??", "", 0, OCTAVE, 0x2590))
    return [WeightedStack((resize, assign, evaluate, execute, main) + start, 6000, 96000, "", 16),
            WeightedStack((evaluate, execute, main) + start, 5000, 80000, "", 16)]


def test_an_applications_second_library_is_its_code_by_its_source_package():
    stacks = _octave_stacks()
    before = build_callgraph(stacks, main_executable=OCTAVE)
    assert vertex(before, "Array<double>::resize1(long, double const&)").kind == kinds.RUNTIME
    asked = []

    def same_source(program, libraries):
        asked.append((program, set(libraries)))
        return {LIBOCTAVE}
    g = build_callgraph(stacks, main_executable=OCTAVE, packaged_with=same_source)
    # only the libraries the location rule left undecided are looked up
    assert asked == [(OCTAVE, {INTERP, LIBOCTAVE})]
    resize = vertex(g, "Array<double>::resize1(long, double const&)")
    assert resize.kind == kinds.USER and resize.rank == 1


def test_source_packages_of_installed_files():
    require("dpkg-query")
    lmp, liblammps = "/usr/bin/lmp", "/usr/lib/x86_64-linux-gnu/liblammps.so.0"
    libz = "/lib/x86_64-linux-gnu/libz.so.1"
    found = packages.source_packages([lmp, liblammps, libz, "/nonexistent/libfoo.so"])
    assert found == {lmp: "lammps", liblammps: "lammps", libz: "zlib"}
    assert packages.application_libraries(lmp, [liblammps, libz]) == {liblammps}
    assert packages.application_libraries("/nonexistent/prog", [liblammps]) == set()


def test_known_runtimes_wherever_they_are_installed():
    for path, family in (("/opt/OpenBLAS/lib/libopenblas.so.0", "BLAS/LAPACK"),
                         ("/usr/lib/x86_64-linux-gnu/liblapack.so.3", "BLAS/LAPACK"),
                         ("/opt/intel/mkl/lib/libmkl_core.so.2", "BLAS/LAPACK"),
                         ("/usr/lib/x86_64-linux-gnu/libfftw3f.so.3", "FFTW"),
                         ("/usr/local/cuda/lib64/libcudart.so.12", "GPU runtime")):
        assert kinds.runtime_family(path) == family, path
        assert kinds.classify("dgemm_", "", path, EXE, {path}) == kinds.RUNTIME


def test_unnamed_frames_are_told_apart_by_offset_and_grouped_by_function():
    prog = "/usr/bin/stripped"
    main = Frame("??", "", 0, prog, 0x1400, function_start=0x13f0)
    a = WeightedStack((Frame("??", "", 0, prog, 0x1181, function_start=0x1169),
                       Frame("??", "", 0, prog, 0x11ec, function_start=0x11d0), main), 8, 256, "", 32)
    b = WeightedStack((Frame("??", "", 0, prog, 0x1181, function_start=0x1169),
                       Frame("??", "", 0, prog, 0x11f9, function_start=0x11d0), main), 8, 256, "", 32)
    # two call sites of one function: two paths (before, every ?? was one frame: merged)
    assert len(merge_stacks([a, b])) == 2
    g = build_callgraph([a, b], main_executable=prog)
    assert {v.function for v in g.vertices.values() if v.kind != "alloc"} == {
        "?? (stripped+0x1169)", "?? (stripped+0x11d0)", "?? (stripped+0x13f0)"}
    lines = build_callgraph([a, b], lines=True, main_executable=prog)
    assert {v.function for v in lines.vertices.values() if v.kind != "alloc"} >= {
        "?? (stripped+0x11ec)", "?? (stripped+0x11f9)"}


def test_function_starts_come_from_the_call_frame_information(native, tmp_path):
    require("nm")
    program = tmp_path / "mesh"
    subprocess.run(["gcc", "-O0", "-o", program, PROGRAMS / "rank_init_vs_mesh.c"], check=True)
    symbols = subprocess.run(["nm", program], capture_output=True, text=True,
                             check=True).stdout.split("\n")
    address = {line.split()[2]: int(line.split()[0], 16) for line in symbols
               if len(line.split()) == 3 and line.split()[1] in "Tt"}
    starts = set(function_starts(str(program)))
    for name in ("mesh_refine", "timestep", "register_item", "init_fields", "main"):
        assert address[name] in starts, name
    assert function_starts(str(tmp_path / "missing")) == []


def test_wrappers_reach_the_page():
    g = build_callgraph([stack("app_alloc", "exchange", "main", count=800),
                         stack("app_alloc", "setup_mesh", "main", count=60)], main_executable=EXE)
    docs = {"stacks": {"groups": [], "notes": [], "not_recorded": []},
            "callgraphs": [dict(size=48, region="(none)", graph=g)]}
    (graph,) = page_section.data(docs)["callgraphs"]
    assert [(w["function"], w["count"], w["call_sites"]) for w in graph["wrappers"]] == [
        ("app_alloc", 860, 2)]
    assert [r["function"] for r in graph["ranking"]] == ["exchange", "setup_mesh"]


@pytest.mark.parametrize("by", ["allocations", "bytes"])
def test_an_equal_ranks_after_its_callee_even_when_its_own_path_is_shorter(by):
    # solve() passes 990 of 1,000 to smooth() (through the OpenMP runtime) and allocates
    # 10 itself, straight
    parallel = Frame("GOMP_parallel", "", 0, "/usr/lib/x86_64-linux-gnu/libgomp.so.1", 0x14099)
    g = build_callgraph([stack(parallel, "smooth", "solve", "main", count=990),
                         stack("solve", "main", count=10),
                         stack("output", "main", count=400)], main_executable=EXE, by=by)
    assert [v.function for v in g.ranking] == ["smooth", "solve", "output"]
    assert vertex(g, "solve").distance < vertex(g, "smooth").distance
