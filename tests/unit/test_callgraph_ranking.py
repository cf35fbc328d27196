"""Call-graph ranking on synthetic symbolized stacks (no recording needed).

The stacks are the two stack trace types of Listing 1 of Gomes et al., "Memory allocation
anomalies in high-performance computing applications" (frames innermost first), plus
variations that exercise the trunk rule and recursion.
"""
from heapscope.analysis import classify as kinds
from heapscope.analysis.callgraph import build_callgraph, vertex
from heapscope.analysis.stacks import WeightedStack, merge_stacks
from heapscope.symbolize.frames import Frame

EXE = "/home/dev/mhm/bin/mhm"
LIBSTDCXX = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.33"
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"


def f(function, file="", line=0, module=EXE, inlined=False):
    return Frame(function, file, line, module, line or 1, inlined)


OPNEW = f("operator new(unsigned long)", module=LIBSTDCXX)
VECTOR = [f("__gnu_cxx::new_allocator<int>::allocate(unsigned long, void const*)",
            "/usr/include/c++/12/ext/new_allocator.h", 101),
          f("std::_Vector_base<int, std::allocator<int> >::_M_allocate(unsigned long)",
            "/usr/include/c++/12/bits/stl_vector.h", 169),
          f("std::vector<int, std::allocator<int> >::resize(unsigned long)",
            "/usr/include/c++/12/bits/stl_vector.h", 712)]
EIGEN = [f("Eigen::internal::conditional_aligned_malloc<true>(unsigned long)",
           "/usr/include/eigen3/Eigen/src/Core/util/Memory.h", 212),
         f("Eigen::PlainObjectBase<Eigen::Matrix<int, -1, 1, 0, -1, 1> >::resize(long)",
           "/usr/include/eigen3/Eigen/src/Core/PlainObjectBase.h", 47)]
GET_ELEM = f("Mesh::getElem(int) const", "/home/dev/mhm/src/mesh.cpp", 5007)
OPERATOR = f("Mesh::operator[](int) const", "/home/dev/mhm/include/mesh.h", 1297)
TRUNK = [f("DiffusionCGProblem::configureSpacesImpl()", "/home/dev/mhm/src/problem_cgdiffusion.cpp", 356),
         f("Problem::getDataFiles()", "/home/dev/mhm/include/problem.h", 489),
         f("MHMLocalProblem::readDataFiles()", "/home/dev/mhm/include/problem_mhmlocal.h", 320),
         f("main", "/home/dev/mhm/src/main.cpp", 81),
         f("__libc_start_main", module=LIBC),
         f("_start")]


def listing1():
    """Type 1 (Element::allocNodes via StdFiniteElementSpace::create) and type 12 (an
    Eigen matrix built in getElem, via FiniteElementSpace::setEssentialBC)."""
    type1 = [OPNEW, *VECTOR,
             f("Element::allocNodes(int)", "/home/dev/mhm/include/element.h", 288),
             f("Element::alloc(int)", "/home/dev/mhm/include/element.h", 266),
             GET_ELEM, OPERATOR,
             f("StdFiniteElementSpace::create()", "/home/dev/mhm/src/space_stdfiniteelem.cpp", 134),
             *TRUNK]
    type12 = [f("malloc", module=LIBC), *EIGEN, GET_ELEM, OPERATOR,
              f("FiniteElementSpace::setEssentialBC()", "/home/dev/mhm/src/space_finiteelem.cpp", 36),
              *TRUNK]
    return [WeightedStack(tuple(type1), 256, 256 * 12, "local", 12),
            WeightedStack(tuple(type12), 256, 256 * 12, "local", 12)]


def test_listing1_getelem_ranks_first_then_operator():
    g = build_callgraph(listing1())
    names = [v.function for v in g.ranking]
    assert names[:2] == ["Mesh::getElem(int) const", "Mesh::operator[](int) const"]
    top = g.ranking[0]
    assert (top.types, top.count, top.bytes) == (2, 512, 512 * 12)
    # Element::alloc is user code nearer the allocation, but on one path only.
    assert vertex(g, "Element::alloc(int)").rank > 2
    assert vertex(g, "Element::alloc(int)").types == 1


def test_entry_runtime_and_trunk_are_drawn_not_ranked():
    g = build_callgraph(listing1())
    for name in ("main", "_start", "__libc_start_main"):
        v = vertex(g, name)
        assert v.kind == kinds.ENTRY and v.rank == 0 and v.types == 2
    for v in g.vertices.values():
        if v.function.startswith(("std::", "__gnu_cxx::", "Eigen::", "operator new", "malloc")):
            assert v.kind == kinds.RUNTIME and v.rank == 0, v.function
    for name in ("DiffusionCGProblem::configureSpacesImpl()", "MHMLocalProblem::readDataFiles()"):
        v = vertex(g, name)
        assert v.trunk and v.rank == 0 and v.types == 2
    ranked = {v.function for v in g.ranking}
    assert ranked == {"Mesh::getElem(int) const", "Mesh::operator[](int) const",
                      "Element::allocNodes(int)", "Element::alloc(int)",
                      "StdFiniteElementSpace::create()", "FiniteElementSpace::setEssentialBC()"}


def test_edges_and_sink_carry_counts():
    g = build_callgraph(listing1())
    assert (g.types, g.count, g.bytes) == (2, 512, 6144)
    sink = g.vertices[("alloc", 12)]
    assert sink.count == 512 and sink.types == 2
    by_name = {(g.vertices[e.caller].function, g.vertices[e.callee].function): e for e in g.edges.values()}
    e = by_name[("Mesh::operator[](int) const", "Mesh::getElem(int) const")]
    assert (e.types, e.count) == (2, 512)
    e = by_name[("StdFiniteElementSpace::create()", "Mesh::operator[](int) const")]
    assert (e.types, e.count) == (1, 256)


def test_more_allocations_break_a_tie_in_types():
    a, b = listing1()
    heavy = WeightedStack(b.frames, 1000, 12000, "local", 12)
    g = build_callgraph([a, heavy])
    # setEssentialBC (1 type, 1000 allocations) now outranks create (1 type, 256)
    order = [v.function for v in g.ranking]
    assert order.index("FiniteElementSpace::setEssentialBC()") < order.index("StdFiniteElementSpace::create()")
    assert order[0] == "Mesh::getElem(int) const"


def _through_getelem(caller, count):
    return WeightedStack((OPNEW, *VECTOR, GET_ELEM, f(caller, "/home/dev/mhm/src/fem.cpp", 10),
                          f("run_local_phase()", "/home/dev/mhm/src/fem.cpp", 99), *TRUNK[3:]),
                         count, count * 12, "local", 12)


def test_phase_driver_on_every_path_is_trunk():
    stacks = [_through_getelem("assemble()", 300), _through_getelem("boundary()", 200),
              _through_getelem("refine()", 100),
              WeightedStack((OPNEW, *VECTOR, f("neighbours()", "/home/dev/mhm/src/fem.cpp", 50),
                             f("run_local_phase()", "/home/dev/mhm/src/fem.cpp", 98), *TRUNK[3:]),
                            5000, 60000, "local", 12)]
    g = build_callgraph(stacks)
    driver = vertex(g, "run_local_phase()")
    assert driver.trunk and driver.rank == 0 and driver.types == 4
    # by what a fix removes: neighbours' 5,000 allocations (one path) before getElem's 600
    # (three paths); the callers of getElem, whose allocations all pass through it, right
    # after it (nearest the allocation among equals), most allocations first
    assert [(v.function, v.types, v.count) for v in g.ranking] == [
        ("neighbours()", 1, 5000), ("Mesh::getElem(int) const", 3, 600), ("assemble()", 1, 300),
        ("boundary()", 1, 200), ("refine()", 1, 100)]


def test_paths_that_split_only_below_keep_the_last_shared_function():
    """Two types that meet in getElem and never again below: getElem is trunk-like
    (every path, before the branch) but it is where they all meet, so it ranks."""
    a = WeightedStack((OPNEW, *VECTOR, f("Element::allocNodes(int)", "/s/element.h", 288), GET_ELEM,
                       *TRUNK[3:]), 10, 120, "local", 12)
    b = WeightedStack((OPNEW, *VECTOR, f("Element::allocEdges(int)", "/s/element.h", 300), GET_ELEM,
                       *TRUNK[3:]), 20, 240, "local", 12)
    g = build_callgraph([a, b])
    assert [v.function for v in g.ranking] == ["Mesh::getElem(int) const", "Element::allocEdges(int)",
                                               "Element::allocNodes(int)"]


def test_single_path_ranks_the_user_frame_nearest_the_allocation():
    g = build_callgraph([_through_getelem("assemble()", 7)])
    assert [v.function for v in g.ranking] == ["Mesh::getElem(int) const"]
    assert vertex(g, "assemble()").trunk


def test_recursion_counts_a_path_once():
    rec = f("refine(int)", "/s/refine.cpp", 20)
    stack = WeightedStack((OPNEW, *VECTOR, GET_ELEM, rec, rec, rec, *TRUNK[3:]), 9, 108, "local", 12)
    other = _through_getelem("assemble()", 1)
    g = build_callgraph([stack, other])
    v = vertex(g, "refine(int)")
    assert (v.types, v.count) == (1, 9)
    assert all(e.caller != e.callee for e in g.edges.values())


def test_lines_mode_tells_call_sites_apart():
    s1 = WeightedStack((OPNEW, *VECTOR, f("assemble()", "/s/fem.cpp", 10), *TRUNK[3:]), 3, 36, "", 12)
    s2 = WeightedStack((OPNEW, *VECTOR, f("assemble()", "/s/fem.cpp", 14), *TRUNK[3:]), 4, 48, "", 12)
    by_function = build_callgraph([s1, s2])
    assert vertex(by_function, "assemble()").types == 2
    by_line = build_callgraph([s1, s2], lines=True)
    sites = sorted((v.line, v.count) for v in by_line.vertices.values() if v.function == "assemble()")
    assert sites == [(10, 3), (14, 4)]


def test_merge_adds_identical_paths_from_several_processes():
    a, b = listing1()
    # Same code, other process: other offsets, same function/file/line.
    moved = tuple(Frame(x.function, x.file, x.line, x.module, x.offset + 0x1000, x.inlined) for x in a.frames)
    merged = merge_stacks([a, WeightedStack(moved, 44, 528, "local", 12), b])
    assert [(s.count, s.bytes) for s in merged] == [(300, 3600), (256, 3072)]


def test_classify_rules():
    assert kinds.classify("main", "/x/main.c", EXE, EXE) == kinds.ENTRY
    assert kinds.classify("malloc", "", LIBC, EXE) == kinds.RUNTIME
    assert kinds.classify("hs_malloc", "", "/opt/heapscope/lib/libhsmalloc.so", EXE) == kinds.RUNTIME
    assert kinds.classify("std::vector<int>::push_back(int const&)", "", EXE, EXE) == kinds.RUNTIME
    assert kinds.classify("Eigen::Matrix<double,-1,1>::Matrix()",
                          "/usr/include/eigen3/Eigen/src/Core/Matrix.h", EXE, EXE) == kinds.RUNTIME
    assert kinds.classify("solve()", "/home/dev/lib/solver.cc", "/home/dev/lib/libsolver.so",
                          EXE) == kinds.USER
    assert kinds.classify("helper", "", "/usr/lib/x86_64-linux-gnu/libfoo.so.1", EXE) == kinds.RUNTIME
    assert kinds.classify("compute", "", EXE, EXE) == kinds.USER


def test_lines_mode_keeps_the_phase_driver_on_the_trunk():
    """The driver calls the kernels from two lines: by line, no driver vertex is on every
    path, but the driver is still the trunk of the function view; its lines are never
    ranked (before, line 99 ranked first with 3 of the 4 paths)."""
    driver = "run_local_phase()"
    refine = WeightedStack((OPNEW, *VECTOR, f("refine()", "/home/dev/mhm/src/fem.cpp", 30),
                            f(driver, "/home/dev/mhm/src/fem.cpp", 99), *TRUNK[3:]), 100, 1200, "local", 12)
    stacks = [_through_getelem("assemble()", 300), _through_getelem("boundary()", 200), refine,
              WeightedStack((OPNEW, *VECTOR, f("neighbours()", "/home/dev/mhm/src/fem.cpp", 50),
                             f(driver, "/home/dev/mhm/src/fem.cpp", 98), *TRUNK[3:]),
                            5000, 60000, "local", 12)]
    by_function = build_callgraph(stacks)
    assert vertex(by_function, driver).trunk
    assert by_function.ranking[0].function == "neighbours()"
    g = build_callgraph(stacks, lines=True)
    lines = sorted((v.line, v.types, v.trunk, v.rank) for v in g.vertices.values() if v.function == driver)
    assert lines == [(98, 1, True, 0), (99, 3, True, 0)]
    assert [(v.function, v.line, v.types, v.count) for v in g.ranking] == [
        ("neighbours()", 50, 1, 5000), ("Mesh::getElem(int) const", 5007, 2, 500),
        ("assemble()", 10, 1, 300), ("boundary()", 10, 1, 200), ("refine()", 30, 1, 100)]


def test_lines_mode_single_path_ranks_the_line_nearest_the_allocation():
    g = build_callgraph([_through_getelem("assemble()", 7)], lines=True)
    assert [(v.function, v.line) for v in g.ranking] == [("Mesh::getElem(int) const", 5007)]
    assert all(v.trunk for v in g.vertices.values() if v.function in ("assemble()", "run_local_phase()"))


LIBLAMMPS = "/usr/lib/x86_64-linux-gnu/liblammps.so.0"
LIBGOMP = "/usr/lib/x86_64-linux-gnu/libgomp.so.1"


def test_unresolved_frames_are_runtime_wherever_they_are():
    assert kinds.classify("??", "", "/home/dev/plugins/libfilter.so", EXE) == kinds.RUNTIME
    assert kinds.classify("??", "", EXE, EXE) == kinds.RUNTIME
    assert kinds.classify("??", "", "", EXE) == kinds.RUNTIME
    # a known runtime installed outside the system directories is still a runtime
    assert kinds.classify("GOMP_parallel", "", "/opt/gcc-14/lib64/libgomp.so.1", EXE) == kinds.RUNTIME
    assert kinds.runtime_family("/opt/openmpi/lib/libmpi.so.40") == "MPI"
    assert kinds.runtime_family("/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_btl_tcp.so") == "MPI"
    assert kinds.runtime_family(LIBGOMP) == "OpenMP runtime"
    assert kinds.runtime_family(LIBLAMMPS) == ""


def test_a_distribution_installed_application_library_is_user_code():
    """Debian's lmp is a small main calling liblammps.so.0 in /usr/lib: the library the
    main program calls directly is the application's, so its named frames are ranked;
    MPI_Init called from main does not make libmpi the application's."""
    lmp = "/usr/bin/lmp"
    force = f("LAMMPS_NS::Neighbor::build(int)", module=LIBLAMMPS)
    ctor = f("LAMMPS_NS::LAMMPS::LAMMPS(int, char**, ompi_communicator_t*)", module=LIBLAMMPS)
    main = f("??", module=lmp)   # Debian strips the program: main is unnamed
    stacks = [WeightedStack((f("malloc", module=LIBC), force, ctor, main, f("__libc_start_main", module=LIBC)),
                            90, 900, "", 10),
              WeightedStack((f("malloc", module=LIBC), f("ompi_mpi_init", module="/usr/lib/x86_64-linux-gnu/libmpi.so.40"),
                             f("PMPI_Init", module="/usr/lib/x86_64-linux-gnu/libmpi.so.40"), main,
                             f("__libc_start_main", module=LIBC)), 10, 100, "", 10)]
    assert kinds.application_modules(stacks, lmp) == {LIBLAMMPS}
    g = build_callgraph(stacks, main_executable=lmp)
    assert vertex(g, "LAMMPS_NS::Neighbor::build(int)").kind == kinds.USER
    assert vertex(g, "PMPI_Init").kind == kinds.RUNTIME
    assert g.ranking[0].function == "LAMMPS_NS::Neighbor::build(int)"


def test_trunk_survives_a_stray_path_that_bypasses_it():
    """The driver is on 99% of the allocations; one input-reading path bypasses it: it
    is trunk all the same (before, not being on every path, it ranked first)."""
    driver = f("run_simulation()", "/s/sim.c", 50)
    stacks = [_through_getelem("assemble()", 600), _through_getelem("boundary()", 390),
              WeightedStack((f("malloc", module=LIBC), f("read_input()", "/s/io.c", 9), *TRUNK[3:]),
                            10, 120, "local", 12)]
    stacks = [WeightedStack(s.frames[:-4] + (driver,) + s.frames[-4:], s.count, s.bytes, s.region, s.size)
              if s.count != 10 else s for s in stacks]
    g = build_callgraph(stacks)
    assert vertex(g, "run_simulation()").trunk and vertex(g, "run_simulation()").rank == 0
    assert vertex(g, "run_local_phase()").trunk
    assert g.ranking[0].function == "Mesh::getElem(int) const"
    assert vertex(g, "read_input()").rank > 0


def test_rank_by_bytes_follows_what_a_fix_would_free():
    few_big = WeightedStack((OPNEW, f("load_table()", "/s/t.c", 3), *TRUNK[3:]), 10, 10_000_000, "", 0)
    many_small = WeightedStack((OPNEW, f("make_key()", "/s/k.c", 4), *TRUNK[3:]), 5000, 80_000, "", 0)
    assert build_callgraph([few_big, many_small]).ranking[0].function == "make_key()"
    assert build_callgraph([few_big, many_small], by="bytes").ranking[0].function == "load_table()"


def test_runtime_allocating_per_call_is_named_with_its_call_sites_and_reaches_the_page():
    from heapscope.render.html import stacks as section
    malloc = f("malloc", module=LIBC)
    inner = f("??", module=LIBGOMP)
    task = f("GOMP_task", module=LIBGOMP)
    a = WeightedStack((malloc, inner, task, f("phase_a._omp_fn.0", "/s/omp.c", 18), *TRUNK[3:]),
                      400, 400 * 223, "", 223)
    b = WeightedStack((malloc, inner, task, f("phase_b._omp_fn.0", "/s/omp.c", 32), *TRUNK[3:]),
                      200, 200 * 223, "", 223)
    stray = WeightedStack((malloc, f("read_input()", "/s/io.c", 9), *TRUNK[3:]), 5, 5 * 223, "", 223)
    g = build_callgraph([a, b, stray], main_executable=EXE)
    assert [(p["family"], p["entry"], p["count"], p["types"]) for p in g.patterns] == [
        ("OpenMP runtime", "GOMP_task", 600, 2)]
    assert [(s["function"], s["line"], s["count"]) for s in g.patterns[0]["call_sites"]] == [
        ("phase_a._omp_fn.0", 18, 400), ("phase_b._omp_fn.0", 32, 200)]
    docs = {"stacks": {"groups": [], "notes": [], "not_recorded": []},
            "callgraphs": [dict(size=223, region="(none)", graph=g)]}
    assert section.data(docs)["callgraphs"][0]["patterns"] == g.patterns


CLONE = [f("start_thread", module=LIBC), f("__clone3", module=LIBC)]
LIBGOMP = "/usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0"


def _kernel_path(*callers, count):
    kernel = [f("malloc", module=LIBC), f("kernel", "/src/k.c", 3)]
    return WeightedStack(tuple(kernel + [f(c, "/src/k.c", 9) for c in callers]), count,
                         64 * count, "", 64)


def test_trunk_is_walked_per_thread_root():
    # main -> run -> solve -> {kernel_a, kernel_b} -> kernel: 9,300; a worker thread
    # (through libgomp's start) -> poll -> {log_a, log_b} -> kernel: 700 (7%)
    drivers = ["run", "main"]
    stacks = [_kernel_path("kernel_a", "solve", *drivers, count=6000),
              _kernel_path("kernel_b", "solve", *drivers, count=3300),
              _kernel_path("log_a", "poll", count=400),
              _kernel_path("log_b", "poll", count=300)]
    start = [f("??", module=LIBGOMP)] + CLONE
    stacks[2:] = [WeightedStack(s.frames + tuple(start), s.count, s.bytes, "", 64) for s in stacks[2:]]
    stacks[:2] = [WeightedStack(s.frames + (f("__libc_start_main", module=LIBC), f("_start")),
                                s.count, s.bytes, "", 64) for s in stacks[:2]]
    g = build_callgraph(stacks)
    assert [(v.function, v.count) for v in g.ranking] == [
        ("kernel", 10000), ("kernel_a", 6000), ("kernel_b", 3300), ("log_a", 400), ("log_b", 300)]
    assert vertex(g, "run").trunk and vertex(g, "solve").trunk and vertex(g, "poll").trunk
    # one root (the thread stacks cut short before their start): the old walk, no trunk
    cut = [WeightedStack(s.frames[:-3], s.count, s.bytes, "", 64) if i >= 2 else s
           for i, s in enumerate(stacks)]
    assert not vertex(build_callgraph(cut), "run").trunk


def test_a_worker_driver_the_main_thread_calls_below_its_branch_stays_ranked():
    # main -> run -> {mesh_faces 3,000, mesh_volume 6,500} -> insert_node; a worker ->
    # mesh_faces -> insert_node 500 (all of the worker's, so on its trunk): mesh_faces carries
    # 3,500, only 14% of it where it is trunk, so it is ranked, as without the worker
    main = (f("run", "/src/m.c", 5), f("main", "/src/m.c", 9), f("_start"))
    leaf = (f("malloc", module=LIBC), f("insert_node", "/src/m.c", 1))
    faces, volume = (f("mesh_faces", "/src/m.c", 2),), (f("mesh_volume", "/src/m.c", 3),)
    stacks = [WeightedStack(leaf + faces + main, 3000, 3000 * 64, "", 64),
              WeightedStack(leaf + volume + main, 6500, 6500 * 64, "", 64),
              WeightedStack(leaf + faces + tuple(CLONE), 500, 500 * 64, "", 64)]
    g = build_callgraph(stacks)
    assert [(v.function, v.count) for v in g.ranking] == [
        ("insert_node", 10000), ("mesh_volume", 6500), ("mesh_faces", 3500)]
    assert vertex(g, "run").trunk
