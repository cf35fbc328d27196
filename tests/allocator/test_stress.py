"""hsmalloc under threads: 32 threads per wave on a 2-core machine, random sizes
1 B..1 MiB, objects handed between live threads and freed remotely, threads exiting
with live objects that the next threads verify and free; every object's contents
are checked against its cookie. Also a ThreadSanitizer build of allocator + stress."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def c_sources(src):
    """Every allocator source but the C++ operators (the sanitizer owns those names)."""
    return sorted(str(p) for p in src.glob("*.c") if p.name != "cxx.c")


def parse_ok(stdout):
    fields = stdout.split()
    assert fields and fields[0] == "ok", stdout
    return {k: int(v) for k, v in (f.split("=") for f in fields[1:])}


def test_stress_preloaded(build, native, tmp_path):
    exe = build("../allocator/stress.c", "-O2", "-pthread", name="stress")
    stats_file = tmp_path / "stats.json"
    env = dict(os.environ, LD_PRELOAD=str(native / "lib" / "libhsmalloc.so"),
               HSMALLOC_STATS="json", HSMALLOC_STATS_FILE=str(stats_file))
    res = subprocess.run([str(exe), "32", "3", "4000"], capture_output=True, text=True,
                         env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    got = parse_ok(res.stdout)
    assert got["threads"] == 32 and got["waves"] == 3
    assert got["handed"] > 10000 and got["orphans"] > 100
    stats = json.loads(stats_file.read_text())
    # all of the program's blocks were freed; the only live ones are libc's own
    # (thread stacks bookkeeping, stdio): a few
    assert stats["frees"] <= stats["allocs"] and stats["allocs"] - stats["frees"] < 200
    assert stats["remote_frees"] > 10000
    # remote frees travel in batches: fewer atomic pushes than blocks
    assert stats["remote_pushes"] < stats["remote_frees"]
    assert stats["drained_blocks"] > 0 and stats["queue_drains"] > 0
    # the 96 worker threads' heaps were reused by later threads, not made anew
    assert stats["heaps"] < 96
    assert 0.0 < stats["fast_path_hit_rate"] <= 1.0
    assert 1.0 <= stats["fragmentation"] < 1.2


@pytest.mark.parametrize("secure", ["0", "1"], ids=["default", "secure"])
def test_stress_thread_sanitizer(tmp_path, secure):
    """The allocator's atomics and ownership rules under gcc's ThreadSanitizer, also
    with HSMALLOC_SECURE=1 (other paths: no per-class cache, encoded remote queues).
    The sanitizer owns the malloc symbols, so the stress calls hsmalloc_* directly."""
    if shutil.which("gcc") is None:
        pytest.fail("gcc is required")
    exe = tmp_path / "stress_tsan"
    src = ROOT / "src" / "allocator"
    cmd = ["gcc", "-O1", "-g", "-fsanitize=thread", "-pthread", "-DHSMALLOC_NO_OVERRIDE",
           "-DUSE_HSMALLOC_API", "-I", str(ROOT / "include"), "-I", str(src), "-o", str(exe),
           *c_sources(src), str(ROOT / "tests" / "allocator" / "stress.c"), "-ldl"]
    comp = subprocess.run(cmd, capture_output=True, text=True)
    assert comp.returncode == 0, comp.stderr
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1 exitcode=66", HSMALLOC_SECURE=secure)
    env.pop("LD_PRELOAD", None)
    res = subprocess.run([str(exe), "32", "2", "1200"], capture_output=True, text=True, env=env,
                         timeout=300)
    assert "ThreadSanitizer" not in res.stderr, res.stderr[-4000:]
    assert res.returncode == 0, res.stderr[-2000:]
    assert parse_ok(res.stdout)["threads"] == 32
