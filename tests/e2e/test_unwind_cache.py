"""Exact stacks through the unwind cache (src/recorder/stacks/unwind_cache.c) are the
stacks libunwind finds alone (HEAPSCOPE_UNWIND_CACHE=0): the same stack trace types
with the same counts, on the test programs and on the C++ churn workload, whose
loops revisit the same call sites at the same depths (the cache's hits), on a
program whose call sites recur at other depths and through other callers, and on
deep stacks built as Debian builds (-O2, no frame pointers), walked by the rules
read from the DWARF CFI (cfi.c). Walking costs no system call (strace counts them),
and the cache stands aside where every stack goes to libunwind anyway."""
import json
import re
import subprocess

import pytest

from conftest import require
from heapscope.bench.workloads import BY_NAME
from helpers.many_sites import leaf_paths, want_paths

DEBIAN = ("-O2", "-fomit-frame-pointer")  # how Debian builds its packages


def types(heapscope, out, program, *args, cache=True, env=None):
    env = dict(env or {}, **({} if cache else {"HEAPSCOPE_UNWIND_CACHE": "0"}))
    heapscope("record", "-o", out, "--sizes", "all", "--", program, *args, env=env)
    doc = json.loads(heapscope("stacks", out, "--size", "all", "--top", "0",
                               "--format", "json").stdout)
    return sorted((g["region"], g["size"], t["count"],
                   tuple((f["function"], f["file"], f["line"]) for f in t["frames"]))
                  for g in doc["groups"] for t in g["stack_types"])


@pytest.mark.parametrize("source,args", [("stk_paths.cpp", ()), ("rec_stacks.c", ()),
                                         ("trk_cxx.cpp", ()), ("unw_depths.c", ())])
def test_same_types_as_libunwind_alone(heapscope, build, tmp_path, source, args):
    program = build(source, "-DHEAPSCOPE_WEAK")
    cached = types(heapscope, tmp_path / "cached", program, *args)
    alone = types(heapscope, tmp_path / "alone", program, *args, cache=False)
    assert cached == alone
    assert sum(t[2] for t in cached) >= 14


def test_many_sizes_through_three_callers(heapscope, build, tmp_path):
    """unw_depths.c: leaf_sized reached from three callers at one depth, 8 sizes each;
    the exact counts per (caller, size) are known: 40 from caller_1, 20 from the others."""
    program = build("unw_depths.c", "-DHEAPSCOPE_WEAK")
    cached = types(heapscope, tmp_path / "cached", program)
    got = {}
    for _, size, count, frames in cached:
        names = [f[0] for f in frames]
        if "leaf_sized" in names:
            caller = names[names.index("leaf_sized") + 1]
            got[(caller, size)] = got.get((caller, size), 0) + count
    want = {}
    for k in range(8):
        want[("caller_1", 100 + 16 * k)] = 40
        want[("caller_2", 100 + 16 * k)] = 20
        want[("caller_3", 100 + 16 * k)] = 20
    assert got == want


def test_same_types_on_the_cxx_churn_workload(heapscope, tmp_path):
    program = str(BY_NAME["cxx-churn"].path)
    args = ("--ops", "20000", "--working-set", "512")
    cached = types(heapscope, tmp_path / "cached", program, *args)
    alone = types(heapscope, tmp_path / "alone", program, *args, cache=False)
    assert cached == alone
    assert sum(t[2] for t in cached) > 150_000


@pytest.mark.parametrize("flags,how", [(DEBIAN, "direct"), (("-O2",), "direct"),
                                       (DEBIAN, "tramp-then-direct")])
def test_deep_optimized_stacks_same_as_libunwind_alone(heapscope, build, tmp_path, flags, how):
    """unw_many_sites.c at -O2, with and without frame pointers, and through a frame
    without CFI (libunwind's, by guessing from rbp)."""
    program = build("unw_many_sites.c", *flags)
    cached = types(heapscope, tmp_path / "cached", program, how)
    alone = types(heapscope, tmp_path / "alone", program, how, cache=False)
    assert cached == alone
    leaf_types = [t for t in cached if t[3] and t[3][0][0] == "leaf"]
    assert sorted(t[2] for t in leaf_types) == [40] * (512 if how == "tramp-then-direct" else 256)


def test_known_deep_stacks_without_frame_pointers(heapscope, build, tmp_path):
    """Every frame from the allocating one to main is known (helpers/many_sites.py)."""
    program = build("unw_many_sites.c", *DEBIAN)
    got = leaf_paths((size, count, [f[0] for f in frames])
                     for _, size, count, frames in types(heapscope, tmp_path / "cached", program))
    assert got == want_paths()


def syscalls(native, tmp_path, program, *args, stacks):
    """System calls of one run under the recorder, counted by strace: name -> calls."""
    strace = require("strace")
    out = tmp_path / f"strace-{stacks}.txt"
    env = ["LD_PRELOAD=" + str(native / "lib" / "libheapscope.so"),
           f"HEAPSCOPE_OUTPUT_DIR={tmp_path}", "HEAPSCOPE_TIMELINE_MS=0"]
    if stacks:
        env.append("HEAPSCOPE_STACK_SIZES=all")
    subprocess.run([strace, "-f", "-c", "-U", "name,calls", "-o", str(out),
                    "env", *env, str(program), *args], check=True, capture_output=True)
    calls = {}
    for line in out.read_text().splitlines():
        m = re.match(r"^\s*(\w+)\s+(\d+)\s*$", line)
        if m and m.group(1) != "total":
            calls[m.group(1)] = int(m.group(2))
    return calls


def test_no_system_call_per_stack_or_return_address(native, build, tmp_path):
    """10,240 stacks 11 to 38 frames deep through about 80 return addresses, built
    without frame pointers: recording their stacks adds no signal masking, no mincore,
    no pipe read or write (libunwind's step-by-step unwinder makes them at every step
    in Debian's build), and in all no more system calls than a thread's one-off set-up
    (its stack's bounds: glibc reads /proc/self/maps for the main thread)."""
    program = build("unw_many_sites.c", *DEBIAN)
    counts = syscalls(native, tmp_path, program, stacks=False)
    stacks = syscalls(native, tmp_path, program, stacks=True)
    extra = {name: stacks[name] - counts.get(name, 0) for name in stacks}
    assert all(extra.get(name, 0) <= 0
               for name in ("rt_sigprocmask", "mincore", "msync", "write", "pipe2")), extra
    assert sum(extra.values()) <= 32, extra


def unwinding(stderr):
    """The figures of the recorder's HEAPSCOPE_UNWIND_STATS=1 line."""
    m = re.search(r"unwinding: (?P<stacks>\d+) stacks: (?P<sites>\d+) from call sites seen "
                  r"before, (?P<walked>\d+) walked by CFI rules \((?P<joined>\d+) of them joining "
                  r"a stack met before\), (?P<libunwind>\d+) by libunwind; (?P<aside>\d+) more by "
                  r"libunwind while the cache stood aside \((?P<times>\d+) times\); "
                  r"(?P<rules>\d+) rules read from the CFI, (?P<no_rule>\d+) without a fixed rule; "
                  r"the call-site table doubled (?P<doubled>\d+) times", stderr)
    assert m, stderr
    return {k: int(v) for k, v in m.groupdict().items()}


def record_with_stats(heapscope, tmp_path, program, *args):
    res = heapscope("record", "-o", tmp_path / "stats", "--sizes", "all", "--", program, *args,
                    env={"HEAPSCOPE_UNWIND_STATS": "1"})
    return unwinding(res.stderr)


def test_cache_steps_aside_where_libunwind_does_every_stack(heapscope, build, tmp_path):
    """The first 10,240 stacks pass through tramp, a frame without CFI: every walk
    ends in libunwind. The cache judges windows of 256 stacks: after the first it
    stands aside for 4,096 stacks, after the second (still all libunwind's) for
    8,192, which reach 2,560 stacks into the direct half; the 7,680 after that are
    the cache's again."""
    program = build("unw_many_sites.c", *DEBIAN)
    got = record_with_stats(heapscope, tmp_path, program, "tramp-then-direct")
    assert (got["stacks"], got["libunwind"], got["aside"], got["times"]) == (20480, 512, 12288, 2)
    assert got["sites"] + got["walked"] == 7680


def test_call_site_table_grows_for_call_sites_that_come_back(heapscope, build, tmp_path):
    """unw_sites_wide.c wide: 2,048 call sites in turn, 20 rounds, more than the 512
    sites a thread's table holds at first. Call sites missed again make it double up
    to its 4,096 (three times); then most stacks come from it (with 512 sites, about
    2% did), and they are libunwind's."""
    program = build("unw_sites_wide.c")
    got = record_with_stats(heapscope, tmp_path, program, "wide")
    assert (got["stacks"], got["libunwind"], got["doubled"]) == (40960, 0, 3)
    assert got["sites"] > 0.5 * got["stacks"]
    cached = types(heapscope, tmp_path / "cached", program, "wide")
    assert cached == types(heapscope, tmp_path / "alone", program, "wide", cache=False)
    assert sorted(t[2] for t in cached if t[1] == 24) == [20] * 2048


def test_walk_joins_the_stack_met_before(heapscope, build, tmp_path):
    """unw_sites_wide.c deep: down(d) for d = 1..40 in turn, 10 rounds. Each depth's
    first stack is walked (40); all but the first join the stack of the depth before
    (the same frames of down in the same slots) instead of walking to main; every
    later one comes from its call site. The 40 stacks hold d + 1 frames of down."""
    program = build("unw_sites_wide.c")
    got = record_with_stats(heapscope, tmp_path, program, "deep")
    assert (got["stacks"], got["walked"], got["joined"], got["sites"]) == (400, 40, 39, 360)
    cached = types(heapscope, tmp_path / "cached", program, "deep")
    assert cached == types(heapscope, tmp_path / "alone", program, "deep", cache=False)
    downs = sorted(sum(f[0] == "down" for f in t[3]) for t in cached if t[1] == 40)
    assert downs == list(range(2, 42)) and all(t[2] == 10 for t in cached if t[1] == 40)


def test_thread_taking_over_a_record_unwinds_its_own_stack(heapscope, build, tmp_path):
    """unw_sites_wide.c threads: 8 threads one after the other, each on a stack of its
    own, each taking over the thread record (and unwind cache) of the one before. The
    cache takes the new thread's stack bounds: no stack goes to libunwind (before,
    every stack after the first thread's did, and the cache stood aside)."""
    program = build("unw_sites_wide.c")
    got = record_with_stats(heapscope, tmp_path, program, "threads")
    assert (got["libunwind"], got["aside"], got["times"]) == (0, 0, 0)
    assert got["walked"] >= 8 * 40  # each thread's first round: its sites are its own
    cached = types(heapscope, tmp_path / "cached", program, "threads")
    assert cached == types(heapscope, tmp_path / "alone", program, "threads", cache=False)
    assert sorted(t[2] for t in cached if t[1] == 40) == [80] * 40


def test_start_up_stacks_end_where_libunwind_ends_them(heapscope, build, tmp_path):
    """unw_ctor.c: 300 allocations in a library's constructor, under ld.so's entry code,
    which has no call frame information and a zero rbp: libunwind ends the stack there,
    and so does the walk (before, each such stack went to libunwind, and after 256 the
    cache stood aside); then 300 in main."""
    lib = build("unw_ctor.c", "-shared", "-fPIC", "-DCTOR_LIB", name="libunw_ctor.so")
    program = build("unw_ctor.c", str(lib), f"-Wl,-rpath,{lib.parent}", name="unw_ctor")
    got = record_with_stats(heapscope, tmp_path, program)
    assert (got["libunwind"], got["aside"], got["times"]) == (0, 0, 0)
    cached = types(heapscope, tmp_path / "cached", program)
    assert cached == types(heapscope, tmp_path / "alone", program, cache=False)
    assert sorted((t[1], t[2]) for t in cached if t[1] in (56, 72)) == [(56, 300), (72, 300)]
