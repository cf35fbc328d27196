"""Every way a process ends, under `heapscope record` (tests/programs/end_ways.c): what is
kept, what the final snapshot says of the end (PROCESS_END: which exit and its status),
and record's exit status when data is lost (74: a process ended with no final snapshot).
Each program first keeps 3 blocks of 30030 bytes; the modes add known blocks after."""
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from heapscope.profile import read_profile


def record(tmp_path, program, *args, options=(), timeout=60):
    """`heapscope record` in a session of its own: a program that never ends is killed
    whole (then the test fails) instead of hanging the suite."""
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "heapscope", "record", "-o", str(out), *options, "--",
           str(program), *map(str, args)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{' '.join(map(str, args))}: still running after {timeout} s under record")
    return proc.returncode, stdout, stderr, out


def counts(p, low=30030, high=30033):
    return {size: n for (_r, size), n in p.size_counts.items() if low <= size <= high}


def only_profile(out):
    [path] = out.glob("heapscope.*.hsp")
    return read_profile(path)


@pytest.mark.parametrize("options", [(), ("--trace",)], ids=["timeline", "trace"])
def test_main_calling_pthread_exit_ends_when_its_last_thread_does(build, tmp_path, options):
    """The recorder's own threads (the timeline sampler; the trace writer) kept such a
    program alive forever, every signal blocked: only SIGKILL ended it, with no snapshot."""
    program = build("end_ways.c", "-pthread")
    rc, _out, err, out = record(tmp_path, program, "pthread-exit", options=options)
    assert rc == 0, err
    p = only_profile(out)
    assert (p.snapshot_reason, p.complete, p.process_end.how, p.total_threads) == (
        "exit", True, "last-thread", 2)
    assert counts(p) == {30030: 3, 30031: 4}     # the worker's blocks, after main had gone


def test_a_signal_reaches_a_program_whose_main_called_pthread_exit(build, tmp_path):
    program = build("end_ways.c", "-pthread")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "heapscope", "record", "-o", str(out), "--",
                             str(program), "pthread-wait"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGTERM)                # forwarded to the program
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 128 + signal.SIGTERM, err
    p = only_profile(out)
    assert (p.snapshot_reason, p.process_end.how) == ("sigterm", "signal")
    assert counts(p) == {30030: 3, 30031: 4}


@pytest.mark.parametrize("mode,rc,how,status,extra", [
    ("quick-exit", 4, "quick-exit", 4, {30032: 5}),    # its at_quick_exit handler's blocks too
    ("Exit", 5, "exit-now", 5, {}),
    ("exit", 6, "exit", 6, {}),
])
def test_exit_calls_keep_every_count_and_say_their_status(build, tmp_path, mode, rc, how, status,
                                                          extra):
    program = build("end_ways.c", "-pthread")
    got, _out, err, out = record(tmp_path, program, mode)
    assert got == rc, err
    p = only_profile(out)
    assert (p.snapshot_reason, p.complete) == ("exit", True)
    assert (p.process_end.how, p.process_end.status, p.process_end.mpi_unfinalized) == (how, status, False)
    assert counts(p) == {30030: 3, **extra}


def test_a_raw_exit_system_call_is_data_lost_and_record_says_so(build, tmp_path):
    """No hook sees exit_group: the file has no final snapshot, record names it and exits
    74 (it exited 0: data lost looked like success)."""
    program = build("end_ways.c", "-pthread")
    rc, _out, err, out = record(tmp_path, program, "raw")
    [path] = out.glob("heapscope.*.hsp")
    assert rc == 74, err
    assert f"1 profile without a final snapshot" in err and f"{path.name}: no snapshot at all" in err


def test_periodic_snapshots_bound_what_a_raw_exit_loses(build, tmp_path):
    program = build("end_ways.c", "-pthread")
    rc, _out, err, out = record(tmp_path, program, "raw-late",
                                options=("--snapshot-interval", "100ms", "--timeline-interval", "0"))
    assert rc == 74 and "its last snapshot: periodic, at" in err, err
    p = only_profile(out)
    assert p.snapshot_reason == "periodic" and not p.complete
    assert "its end is not in this file" in p.warnings[0]
    assert counts(p) == {30030: 3, 30031: 4}     # all but what the last 100 ms did


def test_another_signal_that_ends_the_process_writes_its_snapshot(build, tmp_path, heapscope):
    program = build("end_ways.c", "-pthread")
    rc, _out, err, out = record(tmp_path, program, "sigpipe")
    assert rc == 128 + signal.SIGPIPE, err
    p = only_profile(out)
    assert (p.snapshot_reason, p.ending.signal_name, p.process_end.how, p.complete) == (
        "signal", "SIGPIPE", "signal", True)
    assert counts(p) == {30030: 3}
    assert "snapshot  0 (signal; killed: SIGPIPE)" in heapscope("report", out).stdout


def test_a_killed_fork_child_is_left_out_and_named_not_the_whole_directory(build, tmp_path,
                                                                          heapscope):
    """`report DIR` refused the directory for one SIGKILLed child; now it reads the
    parent and lists the child with why (as the job report lists a killed rank), and a
    damaged file too; record exits 74 for the child's lost counts."""
    program = build("end_ways.c", "-pthread")
    rc, _out, err, out = record(tmp_path, program, "fork-kill")
    assert rc == 74, err
    (out / "heapscope.vm.1.hsp").write_bytes(b"not a profile at all")
    res = heapscope("report", out, "--format", "json")
    import json
    doc = json.loads(res.stdout)
    assert len(doc["processes"]) == 1 and doc["processes"][0]["reason"] == "exit"
    assert {s["size"]: s["total_count"] for s in doc["sizes"] if s["size"] >= 30030} == {30030: 3}
    why = {Path(d["file"]).name: d["why"] for d in doc["left_out"]}
    assert why.pop("heapscope.vm.1.hsp") == "not a heapscope profile (bad magic)"
    [(child, reason)] = why.items()
    assert "no complete snapshot" in reason
    text = heapscope("report", out).stdout
    assert f"left out  {out / child}: no complete snapshot" in text


def test_profiles_are_readable_by_their_owner_whatever_the_umask(build, tmp_path):
    """umask(0777) before fork and exec made the children's profiles mode 000."""
    program = build("end_ways.c", "-pthread")
    rc, _out, err, out = record(tmp_path, program, "umask-fork", "/bin/true")
    assert rc == 0, err
    files = sorted(out.glob("heapscope.*.hsp"))
    assert len(files) >= 3
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) & 0o600 == 0o600, (f.name, oct(f.stat().st_mode))
    forked = [read_profile(f) for f in files if counts(read_profile(f)) == {30033: 2}]   # (from 0)
    assert len(forked) == 1 and forked[0].complete


def test_a_dump_followed_by_sigkill_reads_as_incomplete(build, tmp_path, heapscope):
    """The last snapshot is a heapscope_dump(): the process went on and its end is not
    in the file (the same as a copy stopped short after an earlier snapshot)."""
    program = build("rec_signals.c", "-DHEAPSCOPE_WEAK")
    rc, _out, err, out = record(tmp_path, program, "dump")
    assert rc == 128 + signal.SIGKILL and "its last snapshot: api, at" in err
    p = only_profile(out)
    assert (p.snapshot_reason, p.complete) == ("api", False)
    assert "was taken while the process ran: its end is not in this file" in p.warnings[-1]


def test_detached_threads_are_counted_once(build, tmp_path):
    """A detached thread frees glibc's thread-local blocks after its key destructors: it
    attached a second record, so 65 threads read as 69 to 117."""
    program = build("detached_threads.c", "-pthread")
    for run in range(3):
        rc, _out, err, out = record(tmp_path / str(run), program)
        assert rc == 0, err
        p = only_profile(out)
        assert p.total_threads == 65 and p.size_counts[("(none)", 4040)] == 64


@pytest.mark.parametrize("command", ["report", "stacks", "timeline", "leaks", "diff", "alloc-stats"])
def test_a_fifo_named_as_a_profile_is_one_error_line(heapscope, tmp_path, command):
    fifo = tmp_path / "heapscope.vm.1.hsp"
    os.mkfifo(fifo)
    args = {"stacks": ("--size", "8"), "diff": (fifo,)}.get(command, ())
    start = time.monotonic()
    res = heapscope(command, fifo, *args, check=False, timeout=30)
    assert res.returncode == 2 and time.monotonic() - start < 20
    assert res.stderr.strip().splitlines() == [
        f"heapscope: error: {fifo}: is a FIFO, not a regular file: expected "
        + ("an hsmalloc statistics file" if command == "alloc-stats" else "a profile file")]
