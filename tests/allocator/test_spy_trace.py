"""The allocator's event trace (HSMALLOC_TRACE): every line parses, times do not go
back, and the events add up to the statistics of the same run (purges and bytes
purged, address space mapped, pages in use), through a phase without pressure and one
under critical pressure (`pressure_react.c`, pressure from files the test writes)."""
import json
import os
import subprocess


def test_trace_adds_up_to_the_statistics(build, native, tmp_path):
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
    assert trace.name == f"trace.{proc.pid}"
    lines = trace.read_text().splitlines()
    assert lines[0] == f"# hsmalloc trace pid {proc.pid}: t_us event heap addr bytes"
    events = [line.split() for line in lines[1:]]
    assert all(len(e) == 5 for e in events)
    times = [int(e[0]) for e in events]
    assert times == sorted(times)
    stats = json.loads((tmp_path / "stats.json").read_text().splitlines()[-1])

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
