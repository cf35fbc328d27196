"""heapscope.bench.runner: measuring real commands with wait4, the interleaving
schedule, dropping a failing configuration, and the configurations' commands."""
import os
import sys
import time

import pytest

from heapscope import allocators
from heapscope.bench import configs, runner
from heapscope.bench.results import analyze
from heapscope.errors import HeapscopeError


def test_exit_code_checksum_and_stderr_tail(native):
    m = runner.measure(["sh", "-c", "echo checksum: 00ABcd12; echo 'it broke' >&2; exit 3"])
    assert m.exit_code == 3 and not m.ok
    assert m.checksum == "00abcd12"
    assert m.stderr_tail == "it broke\n"
    assert "exited with code 3" in m.failure_text() and "it broke" in m.failure_text()


def test_last_checksum_line_wins_and_success(native):
    m = runner.measure(["sh", "-c", "echo checksum: 1; echo noise; echo checksum: 2"])
    assert m.ok and m.exit_code == 0 and m.checksum == "2"


def test_killed_by_signal(native):
    m = runner.measure(["sh", "-c", "kill -SEGV $$"])
    assert m.exit_code == 128 + 11
    assert "SIGSEGV" in m.failure_text()


def test_timeout_kills_the_whole_process_group(native, tmp_path):
    """The command's own children die too: the marker it would write never appears."""
    marker = tmp_path / "late"
    m = runner.measure(["sh", "-c", f"(sleep 1; touch {marker}) & wait"], timeout=0.2)
    assert m.timed_out and not m.ok
    assert "timed out" in m.failure_text()
    time.sleep(1.5)
    assert not marker.exists()


def test_missing_program_is_a_clear_error(native):
    with pytest.raises(HeapscopeError, match="command not found"):
        runner.measure(["no-such-program-hs"])
    with pytest.raises(HeapscopeError, match="no such file"):
        runner.measure(["/nonexistent/prog"])


def test_resources_come_from_the_command_not_from_python(native):
    """The launcher keeps Python's resident size out of the command's max RSS."""
    assert runner.launcher() is not None, "hs-measure is not built"
    small = runner.measure(["true"])
    assert small.maxrss_kib < 8 * 1024, small.maxrss_kib
    touch = ("b = bytearray(64 << 20)\n"
             "for i in range(0, len(b), 4096): b[i] = 1\n")
    big = runner.measure([sys.executable, "-c", touch])
    assert big.ok
    assert big.maxrss_kib >= 64 * 1024
    assert big.minflt >= (64 << 20) // 4096
    assert big.user + big.sys > 0


def test_cpu_time_of_a_busy_child_is_counted(native):
    m = runner.measure([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"])
    assert m.user >= 0.05
    assert m.wall >= m.user * 0.5


def test_schedule_interleaves_after_warmup():
    jobs = runner.schedule(["a", "b", "c"], runs=2, warmup=1)
    assert [(j.config, j.round, j.warmup) for j in jobs] == [
        ("a", 0, True), ("b", 0, True), ("c", 0, True),
        ("a", 0, False), ("b", 0, False), ("c", 0, False),
        ("a", 1, False), ("b", 1, False), ("c", 1, False)]


def _fake(wall, code=0, checksum="ab"):
    return runner.Measurement(wall=wall, user=wall, sys=0.0, maxrss_kib=1000, minflt=10,
                              majflt=0, exit_code=code, checksum=checksum)


def test_failing_configuration_is_dropped_and_not_counted():
    calls = []

    def run_one(name):
        calls.append(name)
        # "b" succeeds in the warm-up and the first round, then fails
        if name == "b" and calls.count("b") == 3:
            return _fake(1.0, code=9)
        return _fake(float(len(calls)))

    out = runner.run_interleaved(["a", "b"], runs=4, warmup=1, run_one=run_one)
    assert calls == ["a", "b", "a", "b", "a", "b", "a", "a"]
    assert [m.wall for m in out["a"].runs] == [3.0, 5.0, 7.0, 8.0]
    assert len(out["a"].warmups) == 1
    assert out["b"].failed and out["b"].failure.exit_code == 9
    assert out["b"].runs == []


def test_analysis_ratios_and_checksum_mismatch():
    outcomes = {"base": runner.Outcome(runs=[_fake(1.0), _fake(2.0), _fake(3.0)]),
                "fast": runner.Outcome(runs=[_fake(0.5), _fake(1.0), _fake(1.5)])}
    r = analyze("w", ["cmd"], outcomes, "base")
    assert r.checksum == "ab" and r.checksum_error is None
    fast = r.config("fast")
    assert fast.summaries["wall"].mean == pytest.approx(1.0)
    assert fast.summaries["wall"].median == pytest.approx(1.0)
    assert fast.ratios["wall"].value == pytest.approx(0.5)
    assert fast.ratios["maxrss"].value == pytest.approx(1.0)
    outcomes["fast"].runs[1] = _fake(1.0, checksum="cd")
    r = analyze("w", ["cmd"], outcomes, "base")
    assert r.checksum is None
    assert "checksum differs" in r.checksum_error and "ab/cd" in r.checksum_error
    assert any("checksum differs" in e for e in r.errors)


def test_allocator_configs_preload_the_peer(native):
    found, missing = configs.allocator_configs(["glibc", "jemalloc"])
    assert not missing
    glibc, jemalloc = found
    argv, env = glibc.build(["prog", "x"], {"PATH": "/bin"}, None)
    assert argv == ["prog", "x"] and "LD_PRELOAD" not in env
    argv, env = jemalloc.build(["prog"], {"LD_PRELOAD": "/other.so"}, None)
    assert env["LD_PRELOAD"] == f"{allocators.find_allocator('jemalloc')} /other.so"


def test_missing_peer_is_reported_with_its_debian_package(native, monkeypatch, tmp_path):
    monkeypatch.setattr(allocators, "LIBDIRS", [tmp_path])   # a machine without the peers
    found, missing = configs.allocator_configs(["glibc", "jemalloc", "tcmalloc", "mimalloc"])
    assert [c.name for c in found] == ["glibc"]
    assert "apt-get install libjemalloc2" in missing["jemalloc"]
    assert "apt-get install libtcmalloc-minimal4" in missing["tcmalloc"]
    assert "apt-get install libmimalloc2.0" in missing["mimalloc"]


def test_missing_hsmalloc_names_the_component(native, monkeypatch, tmp_path):
    (tmp_path / "lib").mkdir()
    monkeypatch.setenv("HEAPSCOPE_NATIVE_DIR", str(tmp_path))
    found, missing = configs.allocator_configs(["glibc", "hsmalloc"])
    assert [c.name for c in found] == ["glibc"]
    assert "libhsmalloc.so is not built" in missing["hsmalloc"]


def test_unknown_allocator_is_an_error(native):
    with pytest.raises(HeapscopeError, match="unknown allocator 'dlmalloc'"):
        configs.allocator_configs(["glibc", "dlmalloc"])


def test_scratch_directory_is_substituted_and_removed(native, tmp_path):
    c = configs.Config("x", prefix=["env", "OUT={out}"], env={"HEAPSCOPE_OUTPUT_DIR": "{out}"})
    assert c.needs_scratch
    argv, env = c.build(["prog"], {}, "/tmp/s1")
    assert argv == ["env", "OUT=/tmp/s1", "prog"] and env["HEAPSCOPE_OUTPUT_DIR"] == "/tmp/s1"
    note = tmp_path / "dir.txt"
    script = f'test -d "$HEAPSCOPE_OUTPUT_DIR" && echo "$HEAPSCOPE_OUTPUT_DIR" > {note}'
    run_one = runner.runner_for(["sh", "-c", script],
                                {"x": configs.Config("x", env={"HEAPSCOPE_OUTPUT_DIR": "{out}"})},
                                dict(os.environ), None)
    assert run_one("x").ok
    scratch = note.read_text().strip()
    assert scratch and "{out}" not in scratch
    assert not os.path.exists(scratch)
