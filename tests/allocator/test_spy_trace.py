"""The allocator's event trace (HSMALLOC_TRACE): every line parses, times do not go
back, and the events add up to the statistics of the same run (purges and bytes
purged, address space mapped, pages in use), through a phase without pressure and one
under critical pressure (`pressure_react.c`, pressure from files the test writes)."""
import json
import os
import subprocess


def run_pressure_react(build, native, tmp_path):
    """pressure_react.c through a phase without pressure and one under critical pressure:
    (its pid, its trace file, its last statistics dump)."""
    lib = str(native / "lib")
    exe = build("../allocator/pressure_react.c", "-O1", "-L" + lib, "-Wl,-rpath," + lib,
                "-lhsmalloc", name="pressure_react")
    files = tmp_path / "pressure"
    files.mkdir()
    (files / "meminfo").write_text("MemTotal: 1000000 kB\nMemAvailable: 900000 kB\n")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.update({"HSMALLOC_PRESSURE_FILES": str(files), "HSMALLOC_PRESSURE_CHECK_MS": "0",
                "HSMALLOC_TRACE": str(tmp_path / "trace.%p"), "HSMALLOC_STATS": "json",
                "HSMALLOC_STATS_FILE": str(tmp_path / "stats.json")})
    proc = subprocess.Popen([str(exe)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=env)
    proc.stdin.write("phase\n")
    proc.stdin.flush()
    assert proc.stdout.readline().startswith("level 0")
    (files / "meminfo").write_text("MemTotal: 1000000 kB\nMemAvailable: 10000 kB\n")
    proc.stdin.write("phase\n")
    proc.stdin.flush()
    assert proc.stdout.readline().startswith("level 3")
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    (trace,) = tmp_path.glob("trace.*")
    stats = json.loads((tmp_path / "stats.json").read_text().splitlines()[-1])
    return proc.pid, trace, stats


def test_trace_adds_up_to_the_statistics(build, native, tmp_path):
    pid, trace, stats = run_pressure_react(build, native, tmp_path)
    assert trace.name == f"trace.{pid}"
    lines = trace.read_text().splitlines()
    assert lines[0] == f"# hsmalloc trace pid {pid}: t_us event heap addr bytes"
    events = [line.split() for line in lines[1:]]
    assert all(len(e) == 5 for e in events)
    times = [int(e[0]) for e in events]
    assert times == sorted(times)

    def of(kind):
        return [e for e in events if e[1] == kind]

    assert len(of("purge")) == stats["purges"] > 0
    assert sum(int(e[4]) for e in of("purge")) == stats["purged_bytes"]
    assert sum(int(e[4]) for e in of("map")) - sum(int(e[4]) for e in of("unmap")) \
        == stats["reserved"]
    assert len(of("page_new")) - len(of("page_free")) == stats["pages"]
    assert len(of("seg_new")) + len(of("seg_reuse")) - len(of("seg_free")) == stats["segments"]
    assert len(of("seg_new")) >= 16                         # 32 MiB in 2 MiB segments
    # the level went to 3 (headroom 1%), after the first phase's events
    (change,) = [e for e in of("pressure") if e[3] == "3"]
    assert change[4] == "10"
    first_free = times[events.index(of("page_free")[0])]
    assert int(change[0]) > first_free


def test_alloc_stats_replays_the_trace(build, native, tmp_path, heapscope):
    """`heapscope alloc-stats TRACE`: the replay ends where the statistics of the same run
    end (address space reserved, pages, segments, purges), its peaks are at least that,
    and the pressure change to level 3 is listed."""
    pid, trace, stats = run_pressure_react(build, native, tmp_path)
    doc = json.loads(heapscope("alloc-stats", str(trace), "--format", "json").stdout)
    assert doc["pid"] == pid and doc["cut_line"] is None
    events = trace.read_text().splitlines()[1:]
    assert doc["events"] == len(events)
    kinds = {k["event"]: k for k in doc["kinds"]}
    assert kinds["purge"]["count"] == doc["purges"] == stats["purges"] > 0
    assert kinds["purge"]["bytes"] == doc["purged_bytes"] == stats["purged_bytes"]
    assert doc["mapped_bytes"]["end"] == stats["reserved"]
    assert doc["pages"]["end"] == stats["pages"] and doc["heap_segments"]["end"] == stats["segments"]
    assert doc["heap_segments"]["peak"] >= 16 and doc["mapped_bytes"]["peak"] >= 32 << 20
    assert doc["mapped_bytes"]["peak"] >= doc["mapped_bytes"]["end"]
    levels = [c["level"] for c in doc["pressure"]["changes"]]
    assert levels == sorted(set(levels)) and levels[-1] == 3    # one change up, to 3
    assert doc["pressure"]["changes"][-1]["headroom_permille"] == 10
    assert doc["series"]["mapped"][-1] == stats["reserved"]
    assert sum(h["pages_taken"] - h["pages_given_back"] for h in doc["heaps"]) == stats["pages"]
    text = heapscope("alloc-stats", str(trace)).stdout
    assert f"process {pid}, {doc['events']:,} events" in text
    assert f"{stats['purges']:,} purges" in text or f"{stats['purges']} purge" in text


def test_alloc_stats_trace_bad_input(tmp_path, heapscope):
    head = "# hsmalloc trace pid 7: t_us event heap addr bytes\n"
    good = "1 seg_new 1 0x7f0000000000 2097152\n2 page_new 1 0x7f0000010000 65536\n"
    cut = tmp_path / "cut"
    cut.write_text(head + good + "3 page_fr")
    doc = json.loads(heapscope("alloc-stats", str(cut), "--format", "json").stdout)
    assert doc["events"] == 2 and doc["cut_line"] == 4 and doc["pages"]["end"] == 1
    assert "line 4 was cut short" in heapscope("alloc-stats", str(cut)).stdout
    bad = tmp_path / "bad"
    bad.write_text(head + "1 seg_new 1 0x7f0000000000 2097152\n2 bogus 1 0x1 5\n" + good)
    back = tmp_path / "back"
    back.write_text(head + "5 map - 0x1000 4096\n2 map - 0x2000 4096\n")
    for path, message in ((bad, "bad:3: not an event line"), (back, "event times go back")):
        res = heapscope("alloc-stats", str(path), check=False)
        assert res.returncode == 2 and res.stderr.count("\n") == 1 and message in res.stderr, res.stderr
    res = heapscope("alloc-stats", str(cut), str(cut), check=False)
    assert res.returncode == 2 and "only statistics dumps are compared" in res.stderr


def test_huge_blocks_made_of_freed_ones_add_up_too(build, native, tmp_path):
    """huge_reuse.c's churn: new huge blocks made of the pieces freed ones left (moved
    into place with mremap) and a realloc'ed workspace moved whole: every range whose
    mapping goes away is an unmap event, so the trace's address space ends where the
    statistics' does."""
    lib = str(native / "lib")
    exe = build("../allocator/huge_reuse.c", "-O1", "-L" + lib, "-Wl,-rpath," + lib,
                "-lhsmalloc", name="huge_reuse_traced")
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    for mode in ("churn", "grow"):
        out = tmp_path / mode
        out.mkdir()
        env.update({"HSMALLOC_TRACE": str(out / "trace.%p"), "HSMALLOC_STATS": "json",
                    "HSMALLOC_STATS_FILE": str(out / "stats.json")})
        subprocess.run([str(exe), mode], env=env, check=True, capture_output=True, timeout=300)
        (trace,) = out.glob("trace.*")
        events = [line.split() for line in trace.read_text().splitlines()[1:]]
        stats = json.loads((out / "stats.json").read_text().splitlines()[-1])
        mapped = sum(int(e[4]) for e in events if e[1] == "map")
        unmapped = sum(int(e[4]) for e in events if e[1] == "unmap")
        assert mapped - unmapped == stats["reserved"], mode
        assert unmapped > 0, mode
