"""The call-graph ranking on programs built to mislead it (tests/programs/rank_*.c), each
with its known fix target (docs/ranking.md):

- many rare paths through an init function against one hot mesh routine carrying 94.3%;
- a driver on 99% of the allocations, bypassed by one input-reading path;
- a plugin built without symbols and stripped, whose frames are all `??`;
- an OpenMP program whose allocations are the runtime's, one per task it creates;
- a worker thread allocating 8.2% of the size beside the main thread's driver chain;
- OpenMP workers running the main thread's loop (each thread a root of its own);
- allocation wrappers: one with a NULL check, counters and a name feeding three lines in
  the loops of allocate(), a one-liner taking four halo buffers per call of exchange(),
  one whose name does not say it (get_buffer), told by its code;
- a kernel whose name says it makes something (make_residual) but which loops over a
  vector it takes for itself and frees: ranked, not seen through;
- a phase with six one-off objects from six lines beside the loop it calls (23 from one);
- a caller passing 99.8% of its allocations (OpenMP regions) into a callee at the same
  distance from the allocation.
"""
import json
import subprocess


from conftest import PROGRAMS, require


def callgraph(heapscope, out, size, *extra):
    return json.loads(heapscope("callgraph", out, "--size", size, "--format", "json",
                                "--top", "0", *extra).stdout)


def record(heapscope, tmp_path, program, *args, sizes="all", env=None):
    out = tmp_path / "prof"
    heapscope("record", "-o", out, "--sizes", sizes, "--", program, *args, env=env)
    return out


def test_hot_mesh_routine_outranks_the_init_function_with_many_paths(build, heapscope, tmp_path):
    out = record(heapscope, tmp_path, build("rank_init_vs_mesh.c"), sizes="32")
    doc = callgraph(heapscope, out, "32")
    assert (doc["types"], doc["count"]) == (121, 16960)
    first = doc["ranking"][0]
    assert (first["function"], first["types"], first["count"]) == ("mesh_refine", 1, 16000)
    # its only caller, all of whose allocations pass through it, right after it
    assert doc["ranking"][1]["function"] == "timestep"
    # initialize_comm's 30 branches meet again in init_fields: a driver, never ranked
    init = next(v for v in doc["vertices"] if v["function"] == "initialize_comm")
    assert (init["types"], init["count"], init["kind"], init["rank"]) == (120, 960, "driver", None)
    assert [r["function"] for r in doc["ranking"][2:4]] == ["register_item", "init_fields"]
    # by bytes: the same order here (one size)
    assert callgraph(heapscope, out, "32", "--rank-by", "bytes")["ranking"][0]["function"] == "mesh_refine"


def test_driver_bypassed_by_one_path_is_trunk(build, heapscope, tmp_path):
    out = record(heapscope, tmp_path, build("rank_bypassed_driver.c"), sizes="48")
    doc = callgraph(heapscope, out, "48")
    assert doc["count"] == 9600
    ranked = [(r["function"], r["count"]) for r in doc["ranking"]]
    assert ranked[0] == ("element_matrix", 8000)
    assert "run_simulation" not in {f for f, _ in ranked}
    driver = next(v for v in doc["vertices"] if v["function"] == "run_simulation")
    assert (driver["kind"], driver["count"]) == ("trunk", 9500)
    assert ("read_input", 100) in ranked


def test_frames_of_a_stripped_plugin_are_runtime(native, build, heapscope, tmp_path):
    require("strip")
    plugin = tmp_path / "librank_plugin.so"
    subprocess.run(["gcc", "-O0", "-fno-omit-frame-pointer", "-fPIC", "-shared", "-o", plugin,
                    PROGRAMS / "rank_plugin.c"], check=True)
    subprocess.run(["strip", "--strip-all", plugin], check=True)
    out = record(heapscope, tmp_path, build("rank_plugin_main.c", "-ldl"), plugin, sizes="64")
    doc = callgraph(heapscope, out, "64")
    assert doc["count"] == 4800
    unresolved = [v for v in doc["vertices"] if v["function"].startswith("??")]
    assert unresolved and all(v["kind"] == "runtime" and v["rank"] is None for v in unresolved)
    ranked = [(r["function"], r["count"]) for r in doc["ranking"]]
    assert ranked[0] == ("run_filters", 4000)
    assert ("load_mesh", 800) in ranked
    assert not any(f.startswith("??") for f, _ in ranked)


def test_openmp_runtime_allocating_per_task_is_named(build, heapscope, tmp_path):
    out = record(heapscope, tmp_path, build("rank_omp_tasks.c", "-fopenmp"))
    doc = callgraph(heapscope, out, "all")
    patterns = [p for p in doc["runtime_patterns"] if p["family"] == "OpenMP runtime"]
    assert len(patterns) == 1
    p = patterns[0]
    assert (p["library"].startswith("libgomp"), p["entry"], p["count"]) == (True, "GOMP_task", 600)
    sites = {(s["function"], s["line"]): s["count"] for s in p["call_sites"]}
    assert sites == {("phase_a._omp_fn.0", 18): 400, ("phase_b._omp_fn.0", 32): 200}
    text = heapscope("callgraph", out, "--size", "all").stdout
    assert "OpenMP runtime (libgomp.so.1) allocates per call of GOMP_task" in text
    assert "phase_a._omp_fn.0" in text


def test_dot_past_its_time_bound_still_gives_the_result(build, heapscope, tmp_path):
    out = record(heapscope, tmp_path, build("rank_bypassed_driver.c"), sizes="48")
    svg = tmp_path / "g.svg"
    res = heapscope("callgraph", out, "--size", "48", "--svg", svg, "--dot-timeout", "0.001",
                    check=False)
    assert res.returncode == 1
    assert "Fix targets" in res.stdout and "element_matrix" in res.stdout
    assert "warning: dot took over 0.001 s drawing" in res.stderr and "not written" in res.stderr
    assert not svg.exists()
    res = heapscope("callgraph", out, "--size", "48", "--dot-timeout", "0", check=False)
    assert res.returncode == 2 and "bad --dot-timeout '0'" in res.stderr


def ranking_and_kinds(doc):
    ranked = [(r["function"], r["count"]) for r in doc["ranking"]]
    kind = {v["function"]: (v["kind"], v["count"]) for v in doc["vertices"]}
    return ranked, kind


MAIN_THREAD_RANKING = [("element_matrix", 8000), ("assemble", 6000), ("boundary", 2000),
                       ("format_row", 1000), ("write_output", 1000)]


def test_a_worker_thread_does_not_turn_the_main_threads_drivers_into_targets(build, heapscope,
                                                                              tmp_path):
    program = build("rank_worker_thread.c", "-pthread")
    alone = callgraph(heapscope, record(heapscope, tmp_path / "alone", program, sizes="48"), "48")
    assert (alone["types"], alone["count"]) == (3, 9000)
    ranked, kind = ranking_and_kinds(alone)
    assert ranked == MAIN_THREAD_RANKING
    assert kind["run_simulation"] == kind["time_loop"] == ("trunk", 9000)

    both = callgraph(heapscope, record(heapscope, tmp_path / "both", program, "worker",
                                       sizes="48"), "48")
    # the worker's 800 blocks are 8.2%: the main thread's chain carries 91.8% of the whole
    assert (both["types"], both["count"]) == (5, 9800)
    ranked, kind = ranking_and_kinds(both)
    # the main thread's targets in the same order, its drivers trunk; then the worker's
    # target (its two paths meet again in write_log) and its callers
    assert ranked == MAIN_THREAD_RANKING + [("write_log", 800), ("report_a", 500),
                                            ("report_b", 300)]
    assert kind["run_simulation"] == kind["time_loop"] == ("trunk", 9000)
    # the worker's own trunk: its start routine and the driver below it
    assert kind["monitor_main"] == kind["monitor"] == ("trunk", 800)


def test_openmp_workers_running_the_main_threads_loop_leave_its_drivers_trunk(build, heapscope,
                                                                               tmp_path):
    out = record(heapscope, tmp_path, build("rank_omp_workers.c", "-fopenmp"), sizes="40")
    doc = callgraph(heapscope, out, "40")
    assert doc["count"] == 10000
    ranked, kind = ranking_and_kinds(doc)
    assert ranked == [("kernel", 10000), ("cell", 7500), ("face", 2500)]
    # run and solve: the main thread's 5,000 (static schedule on 2 threads); the loop
    # body: both threads', on each root's trunk
    assert kind["run"] == kind["solve"] == ("trunk", 5000)
    assert kind["solve._omp_fn.0"] == ("trunk", 10000)


def test_a_wrapper_with_counters_is_seen_through_to_where_the_rows_are_decided(build, heapscope,
                                                                              tmp_path):
    out = record(heapscope, tmp_path, build("rank_wrapper_counters.c"), sizes="80")
    doc = callgraph(heapscope, out, "80")
    assert (doc["types"], doc["count"]) == (4, 6001)
    ranked, kind = ranking_and_kinds(doc)
    # before: app_malloc ranked alone (100%), allocate() trunk
    assert ranked == [("allocate", 6000), ("read_input", 1)]
    assert kind["app_malloc"] == ("wrapper", 6001)
    assert [(w["function"], w["count"], w["types"], w["call_sites"]) for w in doc["wrappers"]] == [
        ("app_malloc", 6001, 4, 4)]
    # by line: the three lines in the loops of allocate(), the most rows first
    lines = callgraph(heapscope, out, "80", "--lines")
    assert [(r["function"], r["count"]) for r in lines["ranking"][:3]] == [
        ("allocate", 3000), ("allocate", 2000), ("allocate", 1000)]
    assert {v["kind"] for v in lines["vertices"] if v["function"] == "app_malloc"} == {"wrapper"}
    dot = tmp_path / "g.dot"
    text = heapscope("callgraph", out, "--size", "80", "--dot", dot).stdout
    assert "app_malloc (6,001 allocations from 4 call sites)" in text
    assert "Drawn, not ranked: 4 entry points, 1 wrapper." in text
    label = next(line for line in dot.read_text().splitlines() if '"app_malloc' in line)
    assert "\\nwrapper\\n" in label and "(wrapper)" in label


def test_a_one_line_wrapper_is_seen_through_inlined_or_not(build, heapscope, tmp_path):
    for name, flags in (("halo_O0", ()), ("halo_O2", ("-O2",))):   # -O2: app_alloc inlined
        (tmp_path / name).mkdir()
        program = build("rank_wrapper_halo.c", *flags, name=name)
        doc = callgraph(heapscope, record(heapscope, tmp_path / name, program, sizes="512"), "512")
        assert doc["count"] == 860
        ranked, kind = ranking_and_kinds(doc)
        # before: app_alloc first (860), exchange its equal second
        assert ranked[0] == ("exchange", 800), flags
        assert ("setup_mesh", 60) in ranked
        assert kind["app_alloc"] == ("wrapper", 860)
        assert doc["wrappers"][0]["call_sites"] == 5


def test_a_wrapper_whose_name_hides_it_is_told_by_its_code(build, heapscope, tmp_path):
    for name, flags in (("hidden_O0", ()), ("hidden_O2", ("-O2",))):
        (tmp_path / name).mkdir()
        program = build("rank_wrapper_hidden.c", *flags, name=name)
        doc = callgraph(heapscope, record(heapscope, tmp_path / name, program, sizes="64"), "64")
        assert (doc["types"], doc["count"]) == (3, 5001), flags
        ranked, kind = ranking_and_kinds(doc)
        # before: get_buffer ranked first (5,001), its name saying nothing of memory
        assert ranked == [("assemble", 5000), ("read_mesh", 1)], flags
        assert kind["get_buffer"] == ("wrapper", 5001), flags
        assert [(w["function"], w["call_sites"]) for w in doc["wrappers"]] == [
            ("get_buffer", 3)], flags


def test_a_kernel_named_make_that_loops_over_its_own_temporary_is_ranked(build, heapscope,
                                                                          tmp_path):
    for name, flags in (("kernel_O0", ()), ("kernel_O2", ("-O2",))):
        (tmp_path / name).mkdir()
        program = build("rank_kernel_named.c", *flags, "-lm", name=name)
        doc = callgraph(heapscope, record(heapscope, tmp_path / name, program, sizes="96"), "96")
        assert doc["count"] == 501, flags
        ranked, kind = ranking_and_kinds(doc)
        # before: a wrapper by its name, seen through to solve()
        assert ranked[0] == ("make_residual", 501), flags
        assert doc["wrappers"] == [] and kind["make_residual"][0] == "user", flags


def test_repetition_outweighs_one_off_set_up(build, heapscope, tmp_path):
    out = record(heapscope, tmp_path, build("rank_setup_vs_loop.c"), sizes="48")
    doc = callgraph(heapscope, out, "48")
    assert (doc["types"], doc["count"]) == (8, 69)
    # before: refine() (29: six one-off objects and the loop's 23) ranked above the loop
    assert [(r["function"], r["count"]) for r in doc["ranking"]] == [
        ("read_mesh", 40), ("refine_facets", 23), ("refine", 29)]
    # what repeats: allocations beyond the first of each path (refine: 29 - 7 paths)
    assert [r["repeats"] for r in doc["ranking"]] == [39, 22, 22]


def test_a_caller_passing_its_allocations_to_a_callee_ranks_after_it(build, heapscope, tmp_path):
    out = record(heapscope, tmp_path, build("rank_omp_parallel.c", "-fopenmp"),
                 env={"OMP_NUM_THREADS": "1"})
    report = json.loads(heapscope("report", out, "--format", "json").stdout)
    busiest = report["sizes"][0]
    assert busiest["total_count"] == 600   # one team per parallel region, on one thread
    size = str(busiest["size"])
    doc = callgraph(heapscope, out, size)
    ranked, _ = ranking_and_kinds(doc)
    # solve() passes 499 of its 500 into smooth(), both 3 frames from the allocation:
    # before, solve ranked first (the tie in distance went to the larger count)
    assert ranked == [("smooth", 499), ("solve", 500), ("output", 100)]
    (pattern,) = doc["runtime_patterns"]
    assert (pattern["family"], pattern["entry"], pattern["count"], pattern["types"]) == (
        "OpenMP runtime", "GOMP_parallel", 600, 3)
    assert [(s["function"], s["count"]) for s in pattern["call_sites"]] == [
        ("smooth", 499), ("output", 100), ("solve", 1)]
    text = heapscope("callgraph", out, "--size", size).stdout
    assert ("OpenMP runtime (libgomp.so.1) allocates per call of GOMP_parallel: 600 allocations "
            "(100.0%), 3 paths") in text
