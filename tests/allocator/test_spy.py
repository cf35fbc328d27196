"""The allocator spy: per-heap figures of a program with known allocations (`spy.c`),
the JSON dumps at exit and on SIGUSR2, hsmalloc_heap_stats_self, and `heapscope
alloc-stats` reading, printing and comparing them."""
import json
import os
import signal
import subprocess
import time

N, R = 1000, 10          # spy.c: N mallocs of 100 bytes in thread A, R moved to 5000 bytes
# B frees N/2 of A's 112-byte blocks, never allocating the class: its cache overflows
# every 4096 // 112 = 36 frees, and each of the 13 batches waits in the transfer cache
# (nobody takes them; 468 blocks fit in 16 slots and 64 KiB) instead of reaching A's
# queue: only the 32 B held at its exit go there
PARKED = (N // 2 - 1) // (4096 // 112) * (4096 // 112)


def class_size(n):
    """malloc's class in hsmalloc (docs/hsmalloc.md): 16, then 16-byte steps to 128 (the
    packed 8-byte steps are operator new's by default), then 8 per doubling."""
    if n <= 128:
        return max(16, (n + 15) // 16 * 16)
    top = 1 << ((n - 1).bit_length() - 1)
    step = top // 8
    return (n + step - 1) // step * step


def run_spy(build, native, tmp_path, *args, name="stats.json", env=None):
    lib = str(native / "lib")
    exe = build("../allocator/spy.c", "-O1", "-pthread", "-L" + lib, "-Wl,-rpath," + lib,
                "-lhsmalloc", name="spy")
    out = tmp_path / name
    full = dict(os.environ)
    full.pop("LD_PRELOAD", None)
    full.update({"HSMALLOC_STATS": "json", "HSMALLOC_STATS_FILE": str(out)})
    full.update(env or {})
    res = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, env=full,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout, out


def expected_a():
    requested = N * 100 + R * 5000 + 200
    allocated = N * class_size(100) + R * class_size(5000) + class_size(200)
    return {"allocs": N + R + 1, "reallocs": R, "requested_bytes": requested,
            "allocated_bytes": allocated, "rfq_blocks": N // 2 - PARKED,
            "rfq_bytes": (N // 2 - PARKED) * class_size(100), "remote_frees": 0}


def test_per_heap_figures_at_exit_and_on_sigusr2(build, native, tmp_path):
    stdout, path = run_spy(build, native, tmp_path, 1)
    dumps = [json.loads(line) for line in path.read_text().splitlines()]
    assert [d["event"] for d in dumps] == ["signal", "exit"]
    assert [d["seq"] for d in dumps] == [0, 1]
    want = expected_a()
    # the program's own view of heap A (hsmalloc_heap_stats_self), before its last free
    words = stdout.split("\n")[1].split()
    mine = {words[i]: int(words[i + 1]) for i in range(1, len(words), 2)}
    assert mine["id"] == 1
    for key, value in want.items():
        assert mine[key if key not in ("requested_bytes", "allocated_bytes")
                    else key.split("_")[0]] == value, key
    assert mine["frees"] == N // 2 + R
    for dump in dumps:
        heaps = {h["id"]: h for h in dump["per_heap"]}
        assert len(heaps) == dump["heaps"] == 3
        a, b = heaps[1], heaps[2]
        for key, value in want.items():
            assert a[key] == value, key
        assert a["frees"] == N // 2 + R + 1
        assert a["fragmentation"] == round(a["allocated_bytes"] / a["requested_bytes"], 6)
        assert a["fast_path_hit_rate"] == round(1 - a["slow_allocs"] / a["allocs"], 6)
        assert b["allocs"] == 0 and b["frees"] == N // 2 and b["remote_frees"] == N // 2
        assert a["state"] == b["state"] == "abandoned"
        # process totals: the heaps' sums; the overhead is real minus live
        for key in ("allocs", "reallocs", "frees", "remote_frees"):
            assert dump[key] == sum(h[key] for h in heaps.values()), key
        assert dump["rfq_blocks"] == N // 2 - PARKED and dump["rfq_bytes"] == want["rfq_bytes"]
        assert (dump["transfer_out"], dump["transfer_in"]) == (PARKED, 0)
        assert (heaps[2]["transfer_out"], heaps[1]["transfer_in"]) == (PARKED, 0)
        assert dump["overhead_bytes"] == dump["real_bytes"] - dump["allocated_now"]
        assert dump["virtual_bytes"] >= dump["real_bytes"]
    # every free is counted as it is made: the signal's dump (taken while the main
    # thread runs) leaves none out either (it left out the main thread's latest own
    # frees when those were counted on their pages)
    assert [d["heaps_frees_behind"] for d in dumps] == [0, 0]


def test_sigusr2_from_outside_while_running(build, native, tmp_path):
    """A process blocked in read(2): the handler writes the dump at once, the read goes on."""
    lib = str(native / "lib")
    exe = build("../allocator/pressure_react.c", "-O1", "-L" + lib, "-Wl,-rpath," + lib,
                "-lhsmalloc", name="pressure_react")
    out = tmp_path / "live.json"
    env = dict(os.environ, HSMALLOC_STATS="json", HSMALLOC_STATS_FILE=str(out))
    env.pop("LD_PRELOAD", None)
    proc = subprocess.Popen([str(exe)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=env)
    proc.stdin.write("phase\n")
    proc.stdin.flush()
    assert proc.stdout.readline().startswith("level")
    proc.send_signal(signal.SIGUSR2)
    for _ in range(100):
        if out.exists() and out.read_text().endswith("\n"):
            break
        time.sleep(0.05)
    dumps = [json.loads(line) for line in out.read_text().splitlines()]
    assert [d["event"] for d in dumps] == ["signal"]
    assert dumps[0]["allocs"] >= 32 * 1024 * 1024 // 4000
    proc.stdin.write("phase\n")
    proc.stdin.flush()
    assert proc.stdout.readline().startswith("level")   # the read was restarted
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    events = [json.loads(line)["event"] for line in out.read_text().splitlines()]
    assert events == ["signal", "exit"]


def test_sigusr2_untouched_without_stats(build, native, tmp_path):
    lib = str(native / "lib")
    exe = build("../allocator/spy.c", "-O1", "-pthread", "-L" + lib, "-Wl,-rpath," + lib,
                "-lhsmalloc", name="spy")
    env = dict(os.environ)
    for key in ("LD_PRELOAD", "HSMALLOC_STATS"):
        env.pop(key, None)
    res = subprocess.run([str(exe), "1"], capture_output=True, text=True, env=env, timeout=60)
    assert res.returncode == -signal.SIGUSR2      # the default action, as without hsmalloc


def test_alloc_stats_command(build, native, tmp_path, heapscope):
    _, first = run_spy(build, native, tmp_path, 0, 0, name="a.json")
    _, second = run_spy(build, native, tmp_path, 0, 5000, name="b.json")
    res = heapscope("alloc-stats", str(first))
    assert res.returncode == 0, res.stderr
    text = res.stdout
    assert "reallocations" in text and "remote-free queue: blocks received" in text
    put = next(line for line in text.splitlines() if "transfer cache: blocks put" in line)
    assert put.split()[-1] == str(PARKED)
    heap_line = next(line for line in text.splitlines() if line.strip().startswith("1 "))
    assert f"{N + R + 1:,}" in heap_line and "abandoned" in heap_line
    res = heapscope("alloc-stats", str(first), "--format", "json")
    doc = json.loads(res.stdout)
    (proc,) = doc["processes"]
    assert (proc["figures"]["transfer_out"], proc["figures"]["transfer_in"]) == (PARKED, 0)
    heap_a = next(h for h in proc["heaps"] if h["id"] == 1)
    assert heap_a["allocs"] == N + R + 1
    assert heap_a["rfq_bytes"] == (N // 2 - PARKED) * class_size(100)
    # one run against the other: 5000 more mallocs of 64 bytes in B
    res = heapscope("alloc-stats", str(first), str(second), "--format", "json")
    assert res.returncode == 0, res.stderr
    rows = {r["key"]: r for r in json.loads(res.stdout)["rows"]}
    assert rows["allocs"]["delta"] == 5000 and rows["frees"]["delta"] == 5000
    assert rows["requested_total"]["delta"] == 5000 * 64
    assert rows["reallocs"]["delta"] == 0
    res = heapscope("alloc-stats", str(first), str(second))
    assert "+5,000" in res.stdout


def test_alloc_stats_bad_input(tmp_path, heapscope):
    text = tmp_path / "text.txt"
    text.write_text("hsmalloc statistics (pid 1)\n  requested 0\n")
    cut = tmp_path / "cut.json"
    cut.write_text('{"allocator": "hsmalloc", "pid": 3, "allocs"')
    other = tmp_path / "other.json"
    other.write_text('{"pid": 3}\n')
    empty = tmp_path / "empty.json"
    empty.write_text("")
    cases = [(tmp_path / "missing.json", "no such file"), (text, "HSMALLOC_STATS=json"),
             (cut, "not a complete JSON object"), (other, "not an hsmalloc statistics object"),
             (empty, "holds no hsmalloc statistics"), (tmp_path, "a directory")]
    for path, message in cases:
        res = heapscope("alloc-stats", str(path), check=False)
        assert res.returncode == 2, path
        assert res.stderr.count("\n") == 1 and message in res.stderr, res.stderr


def test_alloc_stats_reads_a_dump_among_the_programs_stderr(build, native, tmp_path, heapscope):
    """HSMALLOC_STATS_FILE's default is stderr, which the program writes too (octave-cli
    ends with "error: ignoring const execution_exception& while preparing to exit"): its
    lines are skipped, the dumps read as from a file of their own; a dump cut short is
    still an error, and a capture without a dump says so."""
    _, clean = run_spy(build, native, tmp_path, 1)
    signal_dump, exit_dump = clean.read_text().splitlines()
    mixed = tmp_path / "stderr.txt"
    mixed.write_text("\n".join(["Warning: something of the program's", "  indented, too",
                                 signal_dump, "error: ignoring const execution_exception& "
                                 "while preparing to exit", exit_dump, ""]))
    res = heapscope("alloc-stats", str(mixed), "--format", "json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    want = json.loads(heapscope("alloc-stats", str(clean), "--format", "json").stdout)
    (proc,) = doc["processes"]
    assert proc["line"] == 5 and doc["dumps"] == want["dumps"] == 2
    assert proc["figures"] == want["processes"][0]["figures"]
    assert proc["heaps"] == want["processes"][0]["heaps"]
    cut = tmp_path / "cut.txt"
    cut.write_text("a line of the program\n" + exit_dump[:40] + "\nanother line\n")
    only = tmp_path / "only.txt"
    only.write_text("Info: no statistics here\n")
    for path, message in [(cut, "cut.txt:2: not a complete JSON object"),
                          (only, "holds no hsmalloc statistics (no line of it is a dump)")]:
        res = heapscope("alloc-stats", str(path), check=False)
        assert res.returncode == 2 and res.stderr.count("\n") == 1, res.stderr
        assert message in res.stderr, res.stderr


def test_alloc_stats_several_processes_and_events(build, native, tmp_path, heapscope):
    """One file for two processes (as HSMALLOC_STATS_FILE without %p under mpirun): each
    process's last dump, and their totals; --event picks the signal dump."""
    _, first = run_spy(build, native, tmp_path, 1, 0, name="one.json")
    _, second = run_spy(build, native, tmp_path, 0, 300, name="two.json")
    both = tmp_path / "both.json"
    both.write_text(first.read_text() + second.read_text())
    dumps = [json.loads(line) for line in both.read_text().splitlines()]
    res = heapscope("alloc-stats", str(both), "--format", "json")
    doc = json.loads(res.stdout)
    assert [p["pid"] for p in doc["processes"]] == sorted({d["pid"] for d in dumps})
    assert all(p["event"] == "exit" for p in doc["processes"])
    exits = [d for d in dumps if d["event"] == "exit"]
    assert doc["totals"]["allocs"] == sum(d["allocs"] for d in exits)
    assert doc["totals"]["requested_total"] == sum(d["requested_total"] for d in exits)
    assert "all processes" in heapscope("alloc-stats", str(both)).stdout
    res = heapscope("alloc-stats", str(both), "--event", "signal", "--format", "json")
    (only,) = json.loads(res.stdout)["processes"]
    assert only["event"] == "signal" and only["pid"] == dumps[0]["pid"]


def test_alloc_stats_says_which_frees_are_not_counted_yet(build, native, tmp_path, heapscope):
    """A dump of this hsmalloc counts every free, the signal's too: no note under the
    table. A dump that says some running threads' frees were left out (hsmalloc before
    its thread cache counted a thread's own frees on their pages) gets the note."""
    _, path = run_spy(build, native, tmp_path, 1)
    note = "leave out the latest frees of their own blocks by 1 running thread "
    for event in ("signal", "exit"):
        res = heapscope("alloc-stats", str(path), "--event", event)
        assert res.returncode == 0, res.stderr
        assert "leave out" not in res.stdout
    older = tmp_path / "older.json"
    dumps = [json.loads(line) for line in path.read_text().splitlines()]
    dumps[0]["heaps_frees_behind"] = 1
    older.write_text("".join(json.dumps(d) + "\n" for d in dumps))
    res = heapscope("alloc-stats", str(older), "--event", "signal")
    assert res.returncode == 0, res.stderr
    assert note in res.stdout
    doc = json.loads(heapscope("alloc-stats", str(older), "--event", "signal", "--format", "json").stdout)
    assert doc["processes"][0]["heaps_frees_behind"] == 1


def test_the_two_classes_of_16_byte_blocks_are_told_apart(build, native, tmp_path):
    """Requests of 0-8 and of 9-16 bytes both get 16-byte blocks, in two classes: the
    text report printed two rows labelled 16 before; the first is now `16 (<=8)`, and
    the JSON says the largest request of each (`max_request`)."""
    exe = build("../allocator/tiny_bins.c", "-O1", name="tiny_bins")
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libhsmalloc.so"))
    out = tmp_path / "bins.json"
    subprocess.run([str(exe)], env=dict(env, HSMALLOC_STATS="json", HSMALLOC_STATS_FILE=str(out)),
                   check=True, timeout=60)
    bins = json.loads(out.read_text())["bins"]
    assert [(b["size"], b["max_request"], b["allocs"], b["frees"]) for b in bins] == \
        [(16, 8, 50, 50), (16, 16, 70, 70)]
    text = subprocess.run([str(exe)], env=dict(env, HSMALLOC_STATS="1"), capture_output=True,
                          text=True, check=True, timeout=60).stderr
    rows = [line.split() for line in text.splitlines()[text.splitlines().index(
        next(x for x in text.splitlines() if x.split()[:2] == ["size", "allocs"])) + 1:]]
    assert rows == [["16", "(<=8)", "50", "50", "0"], ["16", "70", "70", "0"]]
