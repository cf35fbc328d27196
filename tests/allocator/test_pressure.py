"""The adaptive decay: memory pressure read from files the test writes
(HSMALLOC_PRESSURE_FILES, the test hook of pressure.c) and the allocator's reaction,
phase by phase (`pressure_react.c`: 32 MiB allocated and freed per phase)."""
import os
import subprocess

import pytest

MIB = 1 << 20


def lib_flags(native):
    lib = str(native / "lib")
    return ("-L" + lib, "-Wl,-rpath," + lib, "-lhsmalloc")


def meminfo(directory, total_kb, available_kb):
    (directory / "meminfo").write_text(f"MemTotal: {total_kb} kB\nMemFree: 1 kB\n"
                                       f"MemAvailable: {available_kb} kB\n")


def psi(directory, avg10):
    (directory / "memory.pressure").write_text(
        f"some avg10={avg10:.2f} avg60=0.00 avg300=0.00 total=1\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")


class Phases:
    """The program, one phase per call, with the pressure files in `directory`."""

    def __init__(self, exe, directory, **env):
        full = dict(os.environ)
        full.pop("LD_PRELOAD", None)
        full.update({"HSMALLOC_PRESSURE_FILES": str(directory), "HSMALLOC_PRESSURE_CHECK_MS": "0",
                     "HSMALLOC_PRESSURE_HOLD_MS": "0"})
        full.update(env)
        self.proc = subprocess.Popen([str(exe)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=full)

    def phase(self):
        self.proc.stdin.write("phase\n")
        self.proc.stdin.flush()
        words = self.proc.stdout.readline().split()
        assert words, "the program stopped"
        return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0


@pytest.fixture
def react(build, native):
    return build("../allocator/pressure_react.c", "-O1", *lib_flags(native), name="pressure_react")


def test_levels_follow_the_headroom_and_psi(react, tmp_path):
    meminfo(tmp_path, 1_000_000, 900_000)        # 90% available: no pressure
    run = Phases(react, tmp_path)
    none = run.phase()
    assert none["level"] == 0 and none["headroom"] == 900
    assert none["decay"] == 8 * 1000              # kept: 8 x HSMALLOC_DECAY_MS
    assert none["committed"] > 30 * MIB           # the freed 32 MiB stays for reuse
    assert none["pressure_purges"] == 0

    meminfo(tmp_path, 1_000_000, 20_000)          # 2% available: critical
    critical = run.phase()
    assert critical["level"] == 3 and critical["headroom"] == 20 and critical["decay"] == 0
    assert critical["committed"] < 2 * MIB        # freed pages and segments went back at once
    assert critical["pressure_purges"] > 0

    meminfo(tmp_path, 1_000_000, 200_000)         # 20%: some pressure (under 30%), the base decay
    some = run.phase()
    assert some["level"] == 1 and some["decay"] == 1000
    assert some["committed"] > 30 * MIB
    assert some["pressure_purges"] == critical["pressure_purges"]

    meminfo(tmp_path, 1_000_000, 900_000)         # room, but tasks stall on memory (PSI 3.5%)
    psi(tmp_path, 3.5)
    stalled = run.phase()
    assert stalled["level"] == 2 and stalled["decay"] == 100
    assert stalled["committed"] < 2 * MIB
    assert stalled["pressure_purges"] > some["pressure_purges"]
    run.close()


def test_pressure_is_held(react, tmp_path):
    """Level 2 or more, once seen, stays HSMALLOC_PRESSURE_HOLD_MS after the room is back."""
    meminfo(tmp_path, 1_000_000, 20_000)
    run = Phases(react, tmp_path, HSMALLOC_PRESSURE_HOLD_MS="600000")
    assert run.phase()["level"] == 3
    meminfo(tmp_path, 1_000_000, 900_000)
    held = run.phase()
    assert held["headroom"] == 900 and held["level"] == 2 and held["decay"] == 100
    assert held["committed"] < 2 * MIB
    run.close()


def test_growth_between_readings_counts(react, tmp_path):
    """One reading (a long interval): 40 MiB of room (20%, level 1) when read, at the first
    maintenance (~16 MiB into the phase's 32 MiB); the rest of the phase's growth is seen
    as it happens (headroom estimated from the process's own committed bytes): under 15%
    left, level 2, the frees are purged at once, without a new reading: without a hold,
    until the estimate is back over 15% (level 1); with the default hold (3 s), all."""
    meminfo(tmp_path, 200 * 1024, 40 * 1024)
    run = Phases(react, tmp_path, HSMALLOC_PRESSURE_CHECK_MS="600000")
    first = run.phase()
    assert first["checks"] == 1 and first["level"] == 1
    assert first["pressure_purges"] > 0
    assert 2 * MIB < first["committed"] < 24 * MIB
    run.close()
    run = Phases(react, tmp_path, HSMALLOC_PRESSURE_CHECK_MS="600000",
                 HSMALLOC_PRESSURE_HOLD_MS="3000")
    held = run.phase()
    assert held["checks"] == 1 and held["level"] == 2
    assert held["committed"] < 2 * MIB
    run.close()
    run.close()


def test_cgroup_limit_counts(react, tmp_path):
    """memory.current against memory.high / memory.max (a cgroup v2 directory's files)."""
    meminfo(tmp_path, 1_000_000, 900_000)
    (tmp_path / "memory.max").write_text("max\n")            # no limit
    (tmp_path / "memory.high").write_text(f"{1000 * MIB}\n")
    (tmp_path / "memory.current").write_text(f"{970 * MIB}\n")  # 3% below memory.high
    run = Phases(react, tmp_path)
    first = run.phase()
    assert first["level"] == 3 and first["headroom"] == 30
    assert first["committed"] < 2 * MIB
    (tmp_path / "memory.high").write_text("max\n")
    (tmp_path / "memory.max").write_text(f"{1000 * MIB}\n")
    (tmp_path / "memory.current").write_text(f"{100 * MIB}\n")  # 90% of memory.max free
    second = run.phase()
    assert second["level"] == 0 and second["headroom"] == 900
    run.close()


def test_reading_is_rate_limited(react, tmp_path):
    """HSMALLOC_PRESSURE_CHECK_MS: a change is not seen before the interval has passed."""
    meminfo(tmp_path, 1_000_000, 900_000)
    run = Phases(react, tmp_path, HSMALLOC_PRESSURE_CHECK_MS="600000")
    first = run.phase()
    meminfo(tmp_path, 1_000_000, 10_000)
    second = run.phase()
    assert first["checks"] == 1 and second["checks"] == 1
    assert second["level"] == 0 and second["committed"] > 30 * MIB
    run.close()


def test_fixed_decay_when_switched_off(react, tmp_path):
    meminfo(tmp_path, 1_000_000, 10_000)          # critical, but not read
    run = Phases(react, tmp_path, HSMALLOC_PRESSURE="0")
    first = run.phase()
    assert first["checks"] == 0 and first["level"] == 0 and first["decay"] == 1000
    assert first["committed"] > 30 * MIB
    run.close()
